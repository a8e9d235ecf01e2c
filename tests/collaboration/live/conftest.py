import time

import pytest

from collaboration.models import LiveConnection
from tests.collaboration.live.helpers import served
from tests.factories import UserFactory

# The configuration most tests share: access re-read twice a second, so a removed member is closed soon.
SHARED_ENV = {"COLLAB_ACCESS_CHECK_SECONDS": "0.5"}


@pytest.fixture(scope="package")
def server(django_db_setup, django_db_blocker, tmp_path_factory):
    """One server process for every module here that needs no settings of its own."""
    yield from served(django_db_blocker, tmp_path_factory, "live-shared", SHARED_ENV)


@pytest.fixture(autouse=True)
def _orm_inside_the_event_loop(monkeypatch):
    """These tests read the database from inside ``asyncio.run`` (see ``helpers``); the servers they start are
    given ``DJANGO_ALLOW_ASYNC_UNSAFE=""`` explicitly, so the guard stays on there."""
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def _servers_settled(transactional_db):
    """After a test its sockets are closed, but the server goes on working for them for a moment (projecting,
    forgetting the connection). Emptying the tables meanwhile (the transactional test's flush, which runs
    after this) can deadlock with that work: wait until every socket has been forgotten."""
    yield
    deadline = time.monotonic() + 5
    while LiveConnection.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.fixture
def coauthor(transactional_db):
    return UserFactory()


@pytest.fixture
def stranger(transactional_db):
    return UserFactory()
