"""A single claim made outside any transaction opens and commits its own, in the round trips of its statements:
whatever happens, it leaves the connection with no transaction open and the queue as a claim would."""

import pytest
from django.db import DataError, connection
from psycopg.pq import TransactionStatus

from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob
from processing.queue import claim_writes
from processing.queue.claims import claim_acquire, claims_acquire
from tests.factories import ProjectFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory

pytestmark = pytest.mark.django_db(transaction=True)

LATEX = "latex.compile.pdf/v1"


def transaction_status():
    return connection.connection.info.transaction_status


def other_connection_sees(job_id) -> str:
    """The job's state as another connection reads it: what was committed."""
    from django.db import connections

    with connections["default"].temporary_connection() as cursor:
        cursor.execute("SELECT state FROM processing_processingjob WHERE id = %s", [job_id])
        return cursor.fetchone()[0]


@pytest.fixture
def queued_build(api_client_for, owner, configure_deployment):
    configure_deployment()
    return submit_build(api_client_for(owner), ProjectFactory(owner=owner, starter=True), key="k").json()["id"]


def test_a_claim_is_committed_and_leaves_no_transaction_open(queued_build):
    session = WorkerSessionFactory(processors={LATEX: 1})

    claim = claim_acquire(session_id=session.pk, offers={LATEX: 1})

    assert str(claim.job_id) == queued_build
    assert transaction_status() == TransactionStatus.IDLE
    assert ProcessingAttempt.objects.get(claim_id=claim.claim_id).state == AttemptState.RUNNING
    assert ProcessingJob.objects.get(pk=queued_build).state == JobState.RUNNING


@pytest.mark.parametrize("count", [1, 2], ids=["a-single-claim", "an-acquire-of-several"])
def test_the_candidates_kept_for_the_write_are_gone_once_the_claim_commits(queued_build, count):
    # A later transaction of the connection reading them would admit a job it never locked.
    session = WorkerSessionFactory(processors={LATEX: 2})

    assert claims_acquire(session_id=session.pk, offers={LATEX: count}, count=count)

    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('quire.claim_candidates', true)")
        assert cursor.fetchone()[0] in ("", None)


def test_an_empty_queue_leaves_no_transaction_open(configure_deployment):
    configure_deployment()
    session = WorkerSessionFactory(processors={LATEX: 1})

    assert claim_acquire(session_id=session.pk, offers={LATEX: 1}) is None
    assert transaction_status() == TransactionStatus.IDLE


def test_a_full_session_claims_nothing_and_leaves_no_transaction_open(queued_build, api_client_for, owner):
    session = WorkerSessionFactory(processors={LATEX: 1})
    submit_build(api_client_for(owner), ProjectFactory(owner=owner, starter=True), key="second")
    assert claim_acquire(session_id=session.pk, offers={LATEX: 1}) is not None

    assert claim_acquire(session_id=session.pk, offers={LATEX: 1}) is None, "its one slot is taken"
    assert transaction_status() == TransactionStatus.IDLE


def test_a_failing_write_rolls_back_and_the_job_stays_queued(queued_build, monkeypatch):
    session = WorkerSessionFactory(processors={LATEX: 1})
    monkeypatch.setattr(claim_writes, "_WRITE_LONE", "WITH admitted AS ({admitted}) SELECT 1 / 0, 1, 1 FROM admitted")

    with pytest.raises(DataError):
        claim_acquire(session_id=session.pk, offers={LATEX: 1})

    assert transaction_status() == TransactionStatus.IDLE
    assert other_connection_sees(queued_build) == JobState.QUEUED
    monkeypatch.undo()
    assert str(claim_acquire(session_id=session.pk, offers={LATEX: 1}).job_id) == queued_build, "nothing held"
