import time

import pytest

from collaboration.models import LiveConnection


@pytest.fixture(autouse=True)
def _servers_settled(transactional_db):
    """After a test its pages are closed, but the servers go on working for their sockets for a moment
    (projecting, forgetting the connection); the transactional test's flush, which runs after this, can
    deadlock with that work. Wait until every socket has been forgotten."""
    yield
    deadline = time.monotonic() + 10
    while LiveConnection.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
