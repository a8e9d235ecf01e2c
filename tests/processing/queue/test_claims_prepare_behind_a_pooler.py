"""Behind a transaction pooler a claim's transaction of its own runs on a connection to PostgreSQL itself that
the process's small pool lends it (foundation/database/prepared.py), where its statements stay prepared: planned anew
through the pooler, they cost PostgreSQL about 3 ms of a core an acquire. Runs in the pooled test mode
(scripts/pooled_tests.py)."""

import pytest
from django.conf import settings
from django.db import connections

from foundation.database.direct import DIRECT
from processing.queue.claims import claim_acquire, claims_acquire
from tests.factories import ProjectFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.TRANSACTION_POOLED, reason="runs in the pooled test mode: scripts/pooled_tests.py"),
]

LATEX = "latex.compile.pdf/v1"


@pytest.fixture
def one_lent_connection():
    """A fresh pool of direct connections, its first one open: one at a time is lent, so always that one."""
    connections[DIRECT].close_pool()
    connections[DIRECT].pool.open(wait=True)
    yield
    connections[DIRECT].close_pool()


def prepared_on_the_lent_connection() -> list[str]:
    with connections[DIRECT].pool.connection() as lent:
        return [statement for (statement,) in lent.execute("SELECT statement FROM pg_prepared_statements")]


@pytest.mark.parametrize("count", [1, 2], ids=["a-single-claim", "an-acquire-of-several"])
def test_a_claims_statements_stay_prepared_on_postgresql_itself(
    api_client_for, owner, configure_deployment, one_lent_connection, count
):
    configure_deployment()
    for key in range(count):
        submit_build(api_client_for(owner), ProjectFactory(owner=owner, starter=True), key=f"k{key}")
    session = WorkerSessionFactory(processors={LATEX: count})

    claims = claims_acquire(session_id=session.pk, offers={LATEX: count}, count=count)

    assert len(claims) == count
    prepared = prepared_on_the_lent_connection()
    assert any("pg_advisory_xact_lock" in statement for statement in prepared), "the locking candidates'"
    assert any("INSERT INTO processing_processingattempt" in statement for statement in prepared), "the write"


def test_an_empty_queues_claim_gives_the_connection_back(configure_deployment, one_lent_connection):
    configure_deployment()
    session = WorkerSessionFactory(processors={LATEX: 1})

    assert claim_acquire(session_id=session.pk, offers={LATEX: 1}) is None
    assert connections[DIRECT].pool.get_stats()["pool_available"] == 1
