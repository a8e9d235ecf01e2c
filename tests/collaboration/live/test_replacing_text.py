"""Replacing a text document's whole text through the API (``PUT``) while editors have it open live.

The requests go to the live server itself, so that the process holding the editors' sockets is the one that
stores the replacement and relays it to them.
"""

import asyncio

import pytest

from access.services import member_set
from tests.collaboration.live.helpers import (
    close_all,
    connect,
    eventually,
    file_id_of,
    run,
    stored_text,
    update_rows,
    workspace_row,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_put_with_a_stale_if_match_is_412_and_changes_nothing(server, owner, project):
    file_id = file_id_of(project)
    api, url = server.api(owner), server.file_url(project)

    async def scenario():
        alice = None
        try:
            first = await asyncio.to_thread(api.get, url, timeout=10)
            assert first.status_code == 200
            stale_etag = first.headers["ETag"]
            assert stale_etag == f'"{workspace_row(file_id).version}"'

            # The document moves on: another API write, then a live editor's keystrokes (projected).
            moved = await asyncio.to_thread(
                api.put,
                url,
                data=(first.text + "% by the API\n").encode(),
                headers={"If-Match": stale_etag},
                timeout=10,
            )
            assert moved.status_code == 200, moved.text
            alice = await connect(server, owner, project)
            alice.insert(0, "% live\n")
            await alice.wait_until(alice.saved)
            await eventually(lambda: api.get(url, timeout=10).text == alice.text, what="the projection")

            row, rows, text = workspace_row(file_id), update_rows(file_id), stored_text(file_id)
            stale = await asyncio.to_thread(
                api.put, url, data=b"a text based on an old version\n", headers={"If-Match": stale_etag}, timeout=10
            )
            assert stale.status_code == 412, stale.text
            error = stale.json()["error"]
            assert error["code"] == "version_mismatch"
            assert error["details"]["current_version"] == row.version
            assert stale.headers["ETag"] == f'"{row.version}"'

            after = workspace_row(file_id)
            assert (after.version, after.sha256) == (row.version, row.sha256)
            assert update_rows(file_id) == rows and stored_text(file_id) == text
            current = await asyncio.to_thread(api.get, url, timeout=10)
            assert current.text == text and current.headers["ETag"] == f'"{row.version}"'

            # With the current version the same request is taken, and the live editor receives it.
            fresh = await asyncio.to_thread(
                api.put,
                url,
                data=b"a text based on the current version\n",
                headers={"If-Match": current.headers["ETag"]},
            )
            assert fresh.status_code == 200, fresh.text
            assert fresh.headers["ETag"] == f'"{row.version + 1}"'
            await alice.wait_until(lambda: alice.text == "a text based on the current version\n")
        finally:
            await close_all(alice)

    run(scenario())


def test_a_put_reaches_live_editors_and_a_keystroke_made_meanwhile_survives(server, owner, coauthor, project):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    file_id = file_id_of(project)
    api, url = server.api(owner), server.file_url(project)

    async def scenario():
        alice = bob = None
        try:
            alice = await connect(server, coauthor, project)
            bob = await connect(server, coauthor, project)
            base = alice.text
            assert "\\end{document}" in base
            replaced = base.replace("\\end{document}", "Written through the API.\n\\end{document}")

            # Alice types at the start; her keystroke is still on its way when the PUT is stored.
            alice.holding = True
            alice.insert(0, "% typed meanwhile\n")
            answer = await asyncio.to_thread(api.put, url, data=replaced.encode(), timeout=10)
            assert answer.status_code == 200, answer.text
            assert stored_text(file_id) == replaced
            await bob.wait_until(lambda: bob.text == replaced)
            await alice.wait_until(lambda: "Written through the API." in alice.text)
            assert alice.text == "% typed meanwhile\n" + replaced

            await alice.release()
            await alice.wait_until(alice.saved)
            await bob.wait_until(lambda: bob.text == alice.text)
            assert stored_text(file_id) == "% typed meanwhile\n" + replaced
            await eventually(lambda: api.get(url, timeout=10).text == alice.text, what="the projection")
        finally:
            await close_all(alice, bob)

    run(scenario())
