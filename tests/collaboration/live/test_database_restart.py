"""PostgreSQL restarts under two server processes while editors are connected to both.

Every connection a server process holds outside a request (the live-editing threads', the channel layer's
listener and its pool, the wake-up listener) breaks at once. Afterwards the editors converge, each one's
keystrokes and cursor cross to the other process, what they typed is stored, and a new editor opens on
either process at the first try (before the fix the first socket of each process failed with 500, and once
edits stopped crossing between the processes for good).
"""

import asyncio
import os
import time
from pathlib import Path

import pytest
from django.db import connection, connections

from tests.collaboration.live.helpers import close_all, connect, eventually, file_id_of, run, served, stored_text

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(bool(os.environ.get("DATABASE_URL")), reason="restarts only the embedded PostgreSQL"),
    pytest.mark.restarts_postgres,
]

PGDATA = Path(__file__).resolve().parents[3] / "var" / "pgdata"
ENV = {"COLLAB_ACCESS_CHECK_SECONDS": "0.5"}


@pytest.fixture(scope="module")
def east(django_db_setup, django_db_blocker, tmp_path_factory):
    yield from served(django_db_blocker, tmp_path_factory, "restart-east", ENV)


@pytest.fixture(scope="module")
def west(django_db_setup, django_db_blocker, tmp_path_factory):
    yield from served(django_db_blocker, tmp_path_factory, "restart-west", ENV)


@pytest.fixture(autouse=True)
def _connections_renewed(transactional_db):
    """This thread's connections died with the restart: open new ones for the flush and the servers' stop."""
    yield
    connections.close_all()


def _postgresql_restarted() -> None:
    from config.embedded_db import restart

    connection.close()
    restart(PGDATA)


async def _keep_typing(editor, stop: asyncio.Event) -> str:
    """A keystroke every few milliseconds at the start of the document until told to stop; what was typed."""
    typed = ""
    while not stop.is_set():
        char = "abcdefghij"[len(typed) % 10]
        editor.insert(0, char)
        typed = char + typed
        await asyncio.sleep(0.01)
    return typed


async def _reopened(editors: dict, places: dict) -> None:
    """As a browser's editor does when the server closes its socket (it could not store an update while the
    database was away): a new socket for the same document, whose sync sends the server what it lacks."""
    for name, editor in editors.items():
        if editor.closed is not None:
            server, user, project = places[name]
            editors[name] = await connect(server, user, project, doc=editor.doc, timeout=30)


async def _converged(editors: dict, places: dict, condition, *, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        await _reopened(editors, places)
        if condition():
            return
        seen = {name: (editor.text[:40], editor.text[-8:], editor.closed) for name, editor in editors.items()}
        assert time.monotonic() < deadline, seen
        await asyncio.sleep(0.05)


def test_editors_on_two_processes_converge_after_postgresql_restarts(east, west, owner, coauthor, project):
    from access.services import member_set

    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    file_id = file_id_of(project)

    async def scenario():
        alice = bob = carol = dave = None
        try:
            alice, bob = await connect(east, owner, project), await connect(west, coauthor, project)
            start = alice.text
            alice.insert(0, "before ")
            await bob.wait_until(lambda: bob.text == "before " + start, timeout=10)

            # Alice types on while PostgreSQL restarts, Bob types just after: nothing of it may be lost.
            stop = asyncio.Event()
            typist = asyncio.create_task(_keep_typing(alice, stop))
            await asyncio.to_thread(_postgresql_restarted)
            connection.close()
            stop.set()
            typed = await typist
            bob.insert(len(bob.text), " later")
            editors = {"alice": alice, "bob": bob}
            places = {"alice": (east, owner, project), "bob": (west, coauthor, project)}
            await _converged(
                editors,
                places,
                lambda: editors["alice"].text == editors["bob"].text == typed + "before " + start + " later",
            )
            alice, bob = editors["alice"], editors["bob"]

            # Live traffic crosses the processes again: a keystroke and a cursor, which only the channel
            # layer carries from one process to the other.
            alice.insert(0, "crossing ")
            await bob.wait_until(lambda: bob.text.startswith("crossing "), timeout=10)
            await eventually(lambda: alice.text == bob.text, what="the crossing keystroke everywhere")
            await alice.announce(1, {"cursor": {"anchor": 2, "head": 2}})
            await bob.wait_until(lambda: alice.doc.client_id in bob.presences, timeout=10)

            # A new editor opens on each process at the first try and sees the same text.
            carol, dave = await connect(east, owner, project), await connect(west, coauthor, project)
            assert carol.text == dave.text == alice.text
            await alice.wait_until(alice.saved, timeout=10)
            await bob.wait_until(bob.saved, timeout=10)
            await eventually(lambda: stored_text(file_id) == alice.text, what="the log to hold every keystroke")
            return typed, alice.text
        finally:
            await close_all(alice, bob, carol, dave)

    typed, text = run(scenario())
    assert typed and text.startswith(f"crossing {typed}before ") and text.endswith(" later")
