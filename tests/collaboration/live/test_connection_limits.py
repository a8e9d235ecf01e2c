"""How many editor sockets a user may hold, and how long a silent one stays open."""

import asyncio
import contextlib
import time

import pytest

from collaboration.models import LiveConnection
from tests.collaboration.live.helpers import close_all, connect, eventually, run, served
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

IDLE_SECONDS = 2.0


@pytest.fixture(scope="module")
def limited_server(django_db_setup, django_db_blocker, tmp_path_factory):
    env = {
        "COLLAB_MAX_CONNECTIONS_PER_USER": "2",
        "COLLAB_IDLE_SECONDS": str(IDLE_SECONDS),
        "COLLAB_ACCESS_CHECK_SECONDS": "0.25",
    }
    yield from served(django_db_blocker, tmp_path_factory, "live-limited", env)


def test_a_third_socket_of_one_user_is_closed_with_4530_until_one_closes(limited_server, owner, project):
    other_user = UserFactory()
    other_project = ProjectFactory(owner=other_user, starter=True)

    async def scenario():
        first = second = third = again = others = None
        try:
            first = await connect(limited_server, owner, project)
            second = await connect(limited_server, owner, project)
            third = await connect(limited_server, owner, project, synced=False)
            closed = await third.wait_closed(timeout=5)
            assert closed.code == 4530, closed
            assert not third.synced.is_set(), "the refused socket was given nothing of the document"
            assert first.closed is None and second.closed is None
            # The limit is the user's own: another user opens a socket meanwhile.
            others = await connect(limited_server, other_user, other_project)

            await second.close()
            await eventually(
                lambda: LiveConnection.objects.filter(user_id=owner.pk).count() < 2, what="the closed socket forgotten"
            )
            again = await connect(limited_server, owner, project)
            again.insert(0, "% a new socket\n")
            await again.wait_until(again.saved)
            assert again.closed is None and first.closed is None
        finally:
            await close_all(first, second, third, again, others)

    run(scenario())


def test_a_silent_socket_is_closed_with_4508_and_a_talking_one_is_not(limited_server, owner, coauthor, project):
    other_project = ProjectFactory(owner=coauthor, starter=True)

    async def keep_talking(client, until: asyncio.Event) -> None:
        clock = 0
        while not until.is_set():
            clock += 1
            with contextlib.suppress(Exception):
                await client.announce(clock, {"cursor": None})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(until.wait(), IDLE_SECONDS / 4)

    async def scenario():
        silent = talking = None
        done = asyncio.Event()
        try:
            silent = await connect(limited_server, owner, project)
            talking = await connect(limited_server, coauthor, other_project)
            talker = asyncio.create_task(keep_talking(talking, done))
            opened = time.monotonic()
            closed = await silent.wait_closed(timeout=IDLE_SECONDS + 5)
            elapsed = time.monotonic() - opened
            assert closed.code == 4508, closed
            assert elapsed >= IDLE_SECONDS - 0.3, f"closed after {elapsed:.2f} s, before the idle timeout"
            # Opened at the same moment, the talking socket stays open a while longer (a bounded wait: it would
            # have been closed together with the silent one).
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline:
                assert talking.closed is None, talking.closed
                await asyncio.sleep(0.1)
            done.set()
            await talker
            assert talking.closed is None
        finally:
            done.set()
            await close_all(silent, talking)

    run(scenario())
