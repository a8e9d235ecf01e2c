"""A restore reaches the editors that have the document open as an edit: they converge on the old text, and
typing on goes on from there."""

import asyncio

import pytest

from access.services import member_set
from tests.collaboration.live.helpers import close_all, connect, eventually, file_id_of, run, stored_text

pytestmark = pytest.mark.django_db(transaction=True)

PARAGRAPHS = "First paragraph.\n\nSecond paragraph, deleted by mistake.\n\nThird paragraph.\n"


def test_a_restore_arrives_live_in_every_open_editor(server, owner, coauthor, project):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    api, url = server.api(owner), server.file_url(project)
    history = f"{server.url}/v1/projects/{project.pk}/history"
    assert api.put(url, data=PARAGRAPHS.encode(), timeout=10).status_code == 200
    before = api.post(f"{server.url}/v1/projects/{project.pk}/labels", json={"name": "all three"}, timeout=10)
    assert before.status_code == 201, before.text

    async def scenario():
        alice = bob = None
        try:
            alice, bob = await connect(server, owner, project), await connect(server, coauthor, project)
            start = bob.text.index("Second")
            bob.delete(start, start + len("Second paragraph, deleted by mistake.\n\n"))
            await bob.wait_until(bob.saved)
            await alice.wait_until(lambda: "Second" not in alice.text)

            restored = await asyncio.to_thread(
                api.post, f"{history}/{before.json()['version']}/restore", json={"paths": ["main.tex"]}, timeout=10
            )
            assert restored.status_code == 200, restored.text
            assert restored.json()["version"]["kind"] == "restore"

            for editor in (alice, bob):
                await editor.wait_until(lambda editor=editor: editor.text == PARAGRAPHS)
            bob.insert(0, "% and on we go\n")
            await bob.wait_until(bob.saved)
            await alice.wait_until(lambda: alice.text == "% and on we go\n" + PARAGRAPHS)
            await eventually(lambda: stored_text(file_id_of(project)) == alice.text, what="the log")
        finally:
            await close_all(*(editor for editor in (alice, bob) if editor is not None))

    run(scenario())
