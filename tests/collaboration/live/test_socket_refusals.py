"""What the editor socket refuses: who may not connect at all, and frames it will not take.

A refused handshake is a plain 403 that says nothing about the document. A refused frame closes that socket
with a code saying why, stores nothing, and leaves everybody else's socket alone (a bystander types through
it all and is acknowledged).
"""

import contextlib

import pytest
from pycrdt import Doc, Text, create_update_message, write_message
from websockets.exceptions import ConnectionClosed

from access.services import member_set
from collaboration.live import protocol
from collaboration.live.protocol import var_uint
from tests.collaboration.live.helpers import (
    close_all,
    connect,
    crafted_update,
    file_id_of,
    refusal_of_handshake,
    run,
    served,
    stored_text,
    update_rows,
    workspace_row_text,
)
from tests.factories import ProjectFactory
from workspace.models import ProjectFile

pytestmark = pytest.mark.django_db(transaction=True)

MiB = 1024 * 1024
MAX_UPDATE_BYTES = 3 * MiB
TEXT_LIMIT_BYTES = 2 * MiB  # WORKSPACE_MAX_TEXT_BYTES's default (workspace/limits.py)
RATE, BURST = 5, 10


@pytest.fixture(scope="module")
def strict_server(django_db_setup, django_db_blocker, tmp_path_factory):
    env = {
        "COLLAB_MAX_UPDATE_BYTES": str(MAX_UPDATE_BYTES),
        "COLLAB_MESSAGES_PER_SECOND": str(RATE),
        "COLLAB_MESSAGE_BURST": str(BURST),
    }
    yield from served(django_db_blocker, tmp_path_factory, "live-strict", env)


@pytest.fixture
def paper(project, owner, coauthor):
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    return project


# --- the handshake -------------------------------------------------------------------------------------------


def _outcome(refused) -> tuple:
    """Everything a refused client learns, but the date."""
    response = refused.response
    headers = sorted((name.lower(), value) for name, value in response.headers.raw_items() if name.lower() != "date")
    return response.status_code, response.reason_phrase, headers, bytes(response.body or b"")


def test_who_may_not_connect_is_refused_at_the_handshake_alike(server, owner, stranger, project):
    main = file_id_of(project)
    other_project = ProjectFactory(owner=owner, starter=True)
    missing = ProjectFile.objects.order_by("-pk").values_list("pk", flat=True).first() + 10_000

    async def scenario():
        outcomes = {
            "a stranger": await refusal_of_handshake(server, stranger, project),
            "anonymous": await refusal_of_handshake(server, None, project),
            "a forged session": await refusal_of_handshake(server, None, project, cookie="not-a-session"),
            "another site's page": await refusal_of_handshake(server, owner, project, origin="http://evil.example"),
            "a look-alike origin": await refusal_of_handshake(
                server, owner, project, origin=f"http://127.0.0.1:{server.port}.evil.example"
            ),
            "another port of the host": await refusal_of_handshake(
                server, owner, project, origin=f"http://127.0.0.1:{server.port + 1}"
            ),
            "a port that is not a number": await refusal_of_handshake(
                server, owner, project, origin=f"http://127.0.0.1:{server.port}x"
            ),
            "no file of that id": await refusal_of_handshake(server, owner, project, file_id=missing),
            "another project's file": await refusal_of_handshake(
                server, owner, project, file_id=file_id_of(other_project)
            ),
            "a stranger, no such file": await refusal_of_handshake(server, stranger, project, file_id=missing),
        }
        for who, refused in outcomes.items():
            assert refused.response.status_code == 403, who
        stranger_here = _outcome(outcomes["a stranger"])
        assert stranger_here == _outcome(outcomes["no file of that id"])
        assert stranger_here == _outcome(outcomes["a stranger, no such file"])
        assert stranger_here == _outcome(outcomes["another project's file"])
        # The owner, from the right origin, is let in: the refusals above were about who and where.
        client = await connect(server, owner, project, file_id=main)
        await client.close()

    run(scenario())


# --- frames ------------------------------------------------------------------------------------------------


def _real_update(client) -> bytes:
    return crafted_update(client, lambda text: text.insert(0, "a real keystroke "))


MALFORMED = {
    "garbage bytes": lambda client: b"\xfe\xed\xfa\xce\xde\xad\xbe\xef",
    "a text frame": lambda client: "hello, server",
    "a truncated sync message": lambda client: create_update_message(_real_update(client))[:-3],
    "a sync message with trailing bytes": lambda client: create_update_message(_real_update(client)) + b"\x00",
    "an unknown message type": lambda client: var_uint(7) + write_message(b"hello"),
    "a message type only the server sends": lambda client: protocol.acknowledged(b"\x00"),
    "an unknown sync step": lambda client: var_uint(0) + var_uint(9) + write_message(b"\x00\x00"),
    "an update that is not Yjs": lambda client: create_update_message(b"\xde\xad\xbe\xef\x01\x02\x03"),
    "an update that edits another root": lambda client: create_update_message(_other_root_update()),
}

REFUSED_AS_INVALID_UPDATE = {"an update that is not Yjs", "an update that edits another root"}


def _other_root_update() -> bytes:
    doc = Doc()
    doc["not-content"] = Text("sneaky")
    return doc.get_update()


async def _bystander_and_sender(server, owner, coauthor, paper):
    """A document being edited (the bystander's first keystroke is stored: the log exists and agrees with
    Workspace), and the socket that will send what is refused."""
    bystander = await connect(server, coauthor, paper)
    bystander.insert(0, "% the bystander was here\n")
    await bystander.wait_until(bystander.saved)
    return bystander, await connect(server, owner, paper)


async def _bystander_types_through(bystander, rows_before: int, file_id: int, mark: str) -> None:
    """The bystander's socket is open, takes a keystroke and has it stored; it never saw the refused frame."""
    assert bystander.closed is None
    bystander.insert(len(bystander.text), mark)
    await bystander.wait_until(bystander.saved)
    assert update_rows(file_id) > rows_before
    assert mark in stored_text(file_id)


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_a_malformed_frame_closes_that_socket_only_and_stores_nothing(strict_server, owner, coauthor, paper, kind):
    file_id = file_id_of(paper)

    async def scenario():
        bystander = sender = None
        try:
            bystander, sender = await _bystander_and_sender(strict_server, owner, coauthor, paper)
            rows, text = update_rows(file_id), stored_text(file_id)
            await sender.raw(MALFORMED[kind](sender))
            closed = await sender.wait_closed(timeout=5)
            assert closed.code == 4400, closed
            if kind in REFUSED_AS_INVALID_UPDATE:
                assert sender.refusals[-1]["code"] == "invalid_update"
            assert update_rows(file_id) == rows and stored_text(file_id) == text
            await _bystander_types_through(bystander, rows, file_id, f"% after {kind}\n")
            assert "a real keystroke" not in bystander.text and "sneaky" not in bystander.text
        finally:
            await close_all(bystander, sender)

    run(scenario())


def test_an_oversized_frame_closes_with_4413_and_stores_nothing(strict_server, owner, coauthor, paper):
    file_id = file_id_of(paper)

    async def scenario():
        bystander = sender = None
        try:
            bystander, sender = await _bystander_and_sender(strict_server, owner, coauthor, paper)
            rows, text = update_rows(file_id), stored_text(file_id)
            frame = create_update_message(b"x" * MAX_UPDATE_BYTES)
            assert len(frame) > MAX_UPDATE_BYTES
            await sender.raw(frame)
            closed = await sender.wait_closed(timeout=10)
            assert closed.code == 4413, closed
            assert update_rows(file_id) == rows and stored_text(file_id) == text
            await _bystander_types_through(bystander, rows, file_id, "% after the oversized frame\n")
        finally:
            await close_all(bystander, sender)

    run(scenario())


def test_too_many_messages_close_with_4529_and_the_one_over_the_rate_is_not_taken(
    strict_server, owner, coauthor, paper
):
    file_id = file_id_of(paper)

    async def scenario():
        bystander = sender = None
        try:
            bystander, sender = await _bystander_and_sender(strict_server, owner, coauthor, paper)
            rows, text = update_rows(file_id), stored_text(file_id)
            # Frames that store nothing use up the burst at once; the update after them is over the rate.
            with contextlib.suppress(ConnectionClosed):  # the server may close before the last is sent
                for _ in range(BURST * 3):
                    await sender.raw(protocol.var_uint(protocol.MessageType.QUERY_AWARENESS))
                await sender.raw(create_update_message(_real_update(sender)))
            closed = await sender.wait_closed(timeout=5)
            assert closed.code == 4529, closed
            assert update_rows(file_id) == rows and stored_text(file_id) == text
            await _bystander_types_through(bystander, rows, file_id, "% after the flood\n")
            assert "a real keystroke" not in bystander.text
        finally:
            await close_all(bystander, sender)

    run(scenario())


def test_an_update_taking_the_document_over_two_mebibytes_is_refused(strict_server, owner, coauthor, paper):
    file_id = file_id_of(paper)

    async def scenario():
        bystander = sender = None
        try:
            bystander, sender = await _bystander_and_sender(strict_server, owner, coauthor, paper)
            rows, text = update_rows(file_id), stored_text(file_id)
            size = len(sender.text.encode("utf-8"))

            # One update of a little over 2 MiB (a paste): refused, nothing of it stored or relayed.
            sender.insert(len(sender.text), "p" * (TEXT_LIMIT_BYTES - size + 1))
            closed = await sender.wait_closed(timeout=20)
            assert closed.code == 4413, closed
            assert sender.refusals[-1]["code"] == "document_too_large"
            assert update_rows(file_id) == rows and stored_text(file_id) == text
            await _bystander_types_through(bystander, rows, file_id, "% after the paste\n")
            assert "ppp" not in bystander.text

            # Up to the limit exactly is a document a text file may be.
            sender = await connect(strict_server, owner, paper)
            size = len(sender.text.encode("utf-8"))
            sender.insert(len(sender.text), "a" * (TEXT_LIMIT_BYTES - size))
            await sender.wait_until(sender.saved, timeout=20)
            assert len(stored_text(file_id).encode("utf-8")) == TEXT_LIMIT_BYTES
            rows, text = update_rows(file_id), stored_text(file_id)
            await bystander.wait_until(lambda: bystander.text == text, timeout=20)

            # One more byte is over it.
            sender.insert(0, "b")
            closed = await sender.wait_closed(timeout=10)
            assert closed.code == 4413, closed
            assert sender.refusals[-1]["code"] == "document_too_large"
            assert update_rows(file_id) == rows and stored_text(file_id) == text

            # The bystander deletes to make room and types on; it never received the refused byte.
            bystander.delete(0, 1_000)
            await _bystander_types_through(bystander, rows, file_id, "% room again\n")
            assert not bystander.text.startswith("b")
        finally:
            await close_all(bystander, sender)

    run(scenario())


def test_a_refused_update_on_a_never_edited_document_stores_none_of_it(strict_server, owner, paper):
    """The first update a document's log is offered finds no log yet: a refused one stores nothing at all, not
    even the server's reconciliation with Workspace's text that an accepted one would be stored after."""
    file_id = file_id_of(paper)

    async def scenario():
        sender = None
        try:
            sender = await connect(strict_server, owner, paper)
            text = sender.text
            assert update_rows(file_id) == 0
            await sender.raw(create_update_message(_other_root_update()))
            closed = await sender.wait_closed(timeout=5)
            assert closed.code == 4400 and sender.refusals[-1]["code"] == "invalid_update"
            assert update_rows(file_id) == 0
            assert workspace_row_text(file_id) == text
        finally:
            await close_all(sender)

    run(scenario())
