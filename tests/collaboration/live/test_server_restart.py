"""The server goes away while an editor types, and comes back on the same port.

What the server acknowledged before it went is in the database; the editor keeps typing meanwhile, and when
it reconnects (as the browser's editor does by itself: here a new socket for the same document, whose sync
sends what the server lacks) the server gets every edit, and a fresh editor sees all of them.
"""

import asyncio

import pytest

from access.services import member_set
from collaboration.models import LiveConnection
from tests.collaboration.live.helpers import (
    LiveServer,
    close_all,
    connect,
    covers,
    eventually,
    file_id_of,
    own_clock,
    run,
    state_vector,
    stored_text,
    stored_vector,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def restartable(django_db_setup, django_db_blocker, tmp_path_factory):
    server = LiveServer(tmp_path_factory.mktemp("live-restart"))
    with django_db_blocker.unblock():
        server.start()
        try:
            yield server
        finally:
            server.stop()


async def _keep_typing(client, stop: asyncio.Event, typed: list[str]) -> None:
    """One keystroke every few milliseconds at the start of the document, until told to stop."""
    count = 0
    while not stop.is_set():
        char = "abcdefghij"[count % 10]
        client.insert(count, char)
        typed.append(char)
        count += 1
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("how", ["terminated", "killed"])
def test_edits_survive_the_server_going_away_and_reach_it_after_a_restart(restartable, owner, coauthor, project, how):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    file_id = file_id_of(project)

    async def scenario():
        alice = again = fresh = None
        stop_typing = asyncio.Event()
        typed: list[str] = []
        try:
            alice = await connect(restartable, owner, project)
            start_text = alice.text
            me = alice.doc.client_id
            typer = asyncio.create_task(_keep_typing(alice, stop_typing, typed))
            await alice.wait_until(lambda: alice.acknowledged.get(me, 0) >= 20, timeout=10)
            doomed = set(LiveConnection.objects.values_list("pk", flat=True))

            # The server goes while the keystrokes keep coming.
            await asyncio.to_thread(restartable.kill if how == "killed" else restartable.terminate)
            restartable.wait_released()
            await alice.wait_closed(timeout=10)
            acknowledged = {me: alice.acknowledged[me]}
            stored = stored_vector(file_id)
            assert covers(stored, acknowledged), f"acknowledged {acknowledged}, but the database holds {stored}"
            typed_offline = len(typed)
            await eventually(lambda: len(typed) >= typed_offline + 10, what="typing while the server is away")

            await asyncio.to_thread(restartable.start)
            stop_typing.set()
            await typer
            mine = own_clock(alice)
            assert stored_vector(file_id).get(me, 0) < mine, "some keystrokes never reached the first server"
            if how == "killed":  # the maintenance loop forgets a dead process's sockets; here the test does
                LiveConnection.objects.filter(pk__in=doomed).delete()

            # Reconnecting: a new socket for the same document (same pycrdt Doc, so the same client id).
            again = await connect(restartable, owner, project, doc=alice.doc)
            await again.wait_until(again.saved, timeout=10)
            assert state_vector(again.doc.get_state())[me] == mine
            assert stored_vector(file_id).get(me, 0) == mine
            assert stored_text(file_id) == alice.text

            fresh = await connect(restartable, coauthor, project)
            assert fresh.text == alice.text
            assert fresh.text.startswith("".join(typed)) and fresh.text.endswith(start_text)
            await eventually(
                lambda: restartable.api(owner).get(restartable.file_url(project), timeout=10).text == alice.text,
                what="the projection after the restart",
            )
        finally:
            stop_typing.set()
            await close_all(alice, again, fresh)

    run(scenario())


def test_a_comment_anchor_follows_its_text_across_a_restart(restartable, owner, project):
    api = restartable.api(owner)
    sentence = "The sentence the comment is on."
    text = f"Before it: ünïcode 😀. {sentence} After it.\n"
    assert api.put(restartable.file_url(project), data=text.encode(), timeout=10).status_code == 200
    comments = f"{restartable.url}/v1/projects/{project.pk}/comments"
    start = text.index(sentence)
    made = api.post(comments, json={"path": "main.tex", "from": start, "to": start + len(sentence), "text": "?"})
    assert made.status_code == 201, made.text

    def commented() -> str | None:
        (thread,) = api.get(comments, timeout=10).json()["threads"]
        current = api.get(restartable.file_url(project), timeout=10).text
        return None if thread["from"] is None else current[thread["from"] : thread["to"]]

    async def scenario():
        alice = None
        try:
            alice = await connect(restartable, owner, project)
            alice.insert(0, "Ça commence: ")
            alice.insert(len(alice.text) - 1, " The end.")
            await alice.wait_until(alice.saved)
        finally:
            await close_all(alice)

    run(scenario())
    assert commented() == sentence
    restartable.terminate()
    restartable.wait_released()
    restartable.start()
    assert commented() == sentence  # a new process, its documents rebuilt from the log
