"""Editors typing in one document at once, on one server process or on two, over real sockets.

What the editors see is read from their pycrdt documents; what is durable, from the log in PostgreSQL (rows
of ``AcceptedUpdate``); what Workspace holds, through the API of the server.
"""

import asyncio

import pytest
from pycrdt import create_update_message
from pycrdt._sync import create_sync_step2_message

from access.services import member_remove, member_set
from collaboration.live.protocol import MessageType, SyncStep
from tests.collaboration.live.helpers import (
    close_all,
    connect,
    covers,
    crafted_update,
    eventually,
    file_id_of,
    own_clock,
    payload,
    refusal_of_handshake,
    run,
    served,
    state_vector,
    stored_text,
    stored_vector,
    update_rows,
    workspace_row_text,
)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def second_server(django_db_setup, django_db_blocker, tmp_path_factory):
    """Another server process on the same database: the two meet only through PostgreSQL."""
    yield from served(django_db_blocker, tmp_path_factory, "live-second", {"COLLAB_ACCESS_CHECK_SECONDS": "0.5"})


@pytest.fixture
def paper(project, owner, coauthor):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    return project


def _workspace_text(server, user, project) -> str:
    response = server.api(user).get(server.file_url(project), timeout=10)
    assert response.status_code == 200, response.text
    return response.content.decode("utf-8")


async def _converged(*clients, timeout: float = 10.0) -> str:
    """Wait until every client has the same text and the server acknowledged all each of them typed."""

    def same() -> bool:
        return len({client.text for client in clients}) == 1 and all(client.saved() for client in clients)

    await eventually(same, timeout=timeout, what="the editors to converge")
    return clients[0].text


async def _type_together(alice, bob, alice_at, bob_at, alice_word: str, bob_word: str) -> None:
    """Both type a word, keystroke by keystroke, interleaved; ``*_at`` give each keystroke's index."""
    for index in range(max(len(alice_word), len(bob_word))):
        if index < len(alice_word):
            alice.insert(alice_at(alice, index), alice_word[index])
        if index < len(bob_word):
            bob.insert(bob_at(bob, index), bob_word[index])
        await asyncio.sleep(0.002)


def _after_own(word: str, start: int):
    """Where a typist's next keystroke of ``word`` goes: right after what it typed of it so far."""

    def index(client, typed: int) -> int:
        return client.text.index(word[:typed]) + typed if typed else start

    return index


async def _typing_scenario(alice, bob) -> str:
    start = alice.text
    assert start and bob.text == start, "both editors start from the document's text"

    # Different positions: Alice at the start, Bob at the end, at the same time.
    await _type_together(alice, bob, lambda _, i: i, lambda client, _: len(client.text), "alpha ", " omega")
    text = await _converged(alice, bob)
    assert text == "alpha " + start + " omega"

    # The same position, one keystroke each, neither having seen the other's.
    alice.insert(5, "[A]")
    bob.insert(5, "[B]")
    text = await _converged(alice, bob)
    assert text[5:11] in ("[A][B]", "[B][A]")
    assert text.replace("[A]", "").replace("[B]", "") == "alpha " + start + " omega"

    # The same position again, whole words typed keystroke by keystroke, each typist's cursor after its own
    # last keystroke (wherever the other's moved it): each word stays in one piece.
    here, before = len("alpha"), text
    await _type_together(alice, bob, _after_own("«north»", here), _after_own("§south§", here), "«north»", "§south§")
    text = await _converged(alice, bob)
    assert "«north»" in text and "§south§" in text
    assert text.replace("«north»", "").replace("§south§", "") == before
    return text


def test_two_editors_typing_at_once_converge_and_workspace_projects_their_text(server, owner, coauthor, paper):
    file_id = file_id_of(paper)

    async def scenario():
        alice = bob = None
        try:
            alice = await connect(server, owner, paper)
            bob = await connect(server, coauthor, paper)
            text = await _typing_scenario(alice, bob)
            assert stored_text(file_id) == text, "the log holds exactly what the editors show"
            # Projected by the server a moment after the typing paused, without anyone asking.
            await eventually(lambda: workspace_row_text(file_id) == text, what="the projection")
            return text
        finally:
            await close_all(alice, bob)

    text = run(scenario())
    assert _workspace_text(server, coauthor, paper) == text
    assert stored_text(file_id) == text


def test_editors_on_two_server_processes_converge_and_see_each_other(server, second_server, owner, coauthor, paper):
    file_id = file_id_of(paper)

    async def scenario():
        alice = bob = None
        try:
            alice = await connect(server, owner, paper)
            bob = await connect(second_server, coauthor, paper)
            text = await _typing_scenario(alice, bob)
            assert stored_text(file_id) == text

            # Presence: each one's cursor reaches the other process, named as the server knows its user.
            await alice.announce(1, {"cursor": {"anchor": 3, "head": 5}, "user": {"name": "not me"}})
            await bob.wait_until(lambda: alice.doc.client_id in bob.presences, timeout=10)
            seen_by_bob = bob.presences[alice.doc.client_id]
            assert seen_by_bob["user"]["name"] == owner.username
            assert seen_by_bob["cursor"] == {"anchor": 3, "head": 5}
            await bob.announce(1, {"cursor": {"anchor": 1, "head": 1}})
            await alice.wait_until(lambda: bob.doc.client_id in alice.presences, timeout=10)
            assert alice.presences[bob.doc.client_id]["user"]["name"] == coauthor.username

            # Leaving: Bob closes, and Alice's process hears that he is gone.
            await bob.close()
            await alice.wait_until(lambda: bob.doc.client_id not in alice.presences, timeout=10)
            await eventually(lambda: _workspace_text(server, owner, paper) == text, what="the projection")
        finally:
            await close_all(alice, bob)

    run(scenario())


def test_what_is_acknowledged_or_relayed_is_already_stored(server, owner, coauthor, paper):
    file_id = file_id_of(paper)
    acknowledgements, relayed = [], []

    def on_acknowledged(client, frame: bytes) -> None:
        if frame[0] == MessageType.ACKNOWLEDGED:
            acknowledged = state_vector(payload(frame))
            acknowledgements.append((acknowledged, stored_vector(file_id), update_rows(file_id)))

    def on_relayed(client, frame: bytes) -> None:
        if frame[0] == MessageType.SYNC and frame[1] in (SyncStep.STEP2, SyncStep.UPDATE):
            alice_id = alice_client_id[0]
            seen = {alice_id: state_vector(client.doc.get_state()).get(alice_id, 0)}
            relayed.append((seen, stored_vector(file_id)))

    alice_client_id = []

    async def scenario():
        alice = bob = None
        try:
            alice = await connect(server, owner, paper)
            alice_client_id.append(alice.doc.client_id)
            alice.hooks.append(on_acknowledged)
            bob = await connect(server, coauthor, paper)
            bob.hooks.append(on_relayed)
            word = "persisted before anyone sees it; "
            for index, char in enumerate(word * 2):
                alice.insert(index, char)
                if index % 5 == 0:
                    await asyncio.sleep(0.003)
            await alice.wait_until(alice.saved)
            await bob.wait_until(lambda: bob.text == alice.text)
            return own_clock(alice)
        finally:
            await close_all(alice, bob)

    typed = run(scenario())
    assert acknowledgements, "the author was told its keystrokes were saved"
    for acknowledged, stored, rows in acknowledgements:
        assert covers(stored, acknowledged), f"acknowledged {acknowledged} while the log held {stored}"
        assert rows > 0
    assert acknowledgements[-1][0][alice_client_id[0]] == typed
    seen = [entry for entry in relayed if entry[0][alice_client_id[0]] > 0]
    assert seen, "the second editor received the author's keystrokes"
    for received, stored in seen:
        assert covers(stored, received), f"relayed {received} while the log held {stored}"


def test_a_viewer_receives_edits_but_its_crafted_updates_are_refused(server, owner, coauthor, project):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="viewer")
    file_id = file_id_of(project)

    async def scenario():
        alice = viewer = None
        try:
            alice = await connect(server, owner, project)
            viewer = await connect(server, coauthor, project)
            await viewer.wait_until(lambda: any(refusal["code"] == "read_only" for refusal in viewer.refusals))
            alice.insert(0, "by the owner ")
            await viewer.wait_until(lambda: viewer.text.startswith("by the owner "))
            await alice.wait_until(alice.saved)
            rows, text = update_rows(file_id), stored_text(file_id)

            for frame in (
                create_update_message(crafted_update(viewer, lambda content: content.insert(0, "viewer was here "))),
                create_sync_step2_message(crafted_update(viewer, lambda content: content.insert(0, "sneaked in "))),
            ):
                if viewer.closed is not None:
                    viewer = await connect(server, coauthor, project)
                await viewer.raw(frame)
                closed = await viewer.wait_closed(timeout=5)
                assert closed.code == 4403, closed
                assert viewer.refusals[-1]["code"] == "forbidden"
                assert update_rows(file_id) == rows and stored_text(file_id) == text

            alice.insert(len(alice.text), "% after the viewer\n")
            await alice.wait_until(alice.saved)
            assert "viewer was here" not in alice.text and "sneaked in" not in alice.text
            assert update_rows(file_id) > rows
        finally:
            await close_all(alice, viewer)

    run(scenario())
    assert "viewer was here" not in stored_text(file_id) and "sneaked in" not in stored_text(file_id)


def test_a_removed_member_is_closed_within_seconds(server, owner, coauthor, paper):
    async def scenario():
        alice = bob = None
        try:
            alice = await connect(server, owner, paper)
            bob = await connect(server, coauthor, paper)
            member_remove(actor_id=owner.pk, project_id=paper.pk, username=coauthor.username)
            started = asyncio.get_running_loop().time()
            closed = await bob.wait_closed(timeout=5)
            assert closed.code == 4403, closed
            assert asyncio.get_running_loop().time() - started < 5
            refused = await refusal_of_handshake(server, coauthor, paper)
            assert refused.response.status_code == 403
            alice.insert(0, "% still editing\n")
            await alice.wait_until(alice.saved)
            assert alice.closed is None
        finally:
            await close_all(alice, bob)

    run(scenario())


def test_an_editor_made_viewer_is_told_and_then_refused(server, owner, coauthor, paper):
    file_id = file_id_of(paper)

    async def scenario():
        bob = None
        try:
            bob = await connect(server, coauthor, paper)
            assert bob.refusals == []
            member_set(actor_id=owner.pk, project_id=paper.pk, username=coauthor.username, role="viewer")
            await bob.wait_until(lambda: any(refusal["code"] == "read_only" for refusal in bob.refusals), timeout=5)
            rows = update_rows(file_id)
            bob.insert(0, "too late ")
            closed = await bob.wait_closed(timeout=5)
            assert closed.code == 4403 and bob.refusals[-1]["code"] == "forbidden"
            assert update_rows(file_id) == rows and "too late" not in stored_text(file_id)
        finally:
            await close_all(bob)

    run(scenario())
