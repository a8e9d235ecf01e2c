"""Behind a transaction pooler a claim's transaction runs on PostgreSQL itself, where its statements stay
prepared (foundation/database/prepared.py), on a connection the server process's small direct pool lends it for that one
transaction: an acquire's long poll waits without it. Runs in the pooled test mode (scripts/pooled_tests.py),
against a server whose direct pool holds a single connection."""

import threading
import uuid

import pytest
from django.conf import settings

from processing.models import WorkerRequest
from processing.submission.submit import job_submit
from tests.factories import ProjectFactory
from tests.live_site import site_fixture
from tests.processing.e2e.conftest import E2E_LIMITS, E2E_OPERATIONS, FakeWorker
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not settings.TRANSACTION_POOLED, reason="runs in the pooled test mode: scripts/pooled_tests.py"),
]

ECHO = "test.echo/v1"


# The e2e server (tests/processing/e2e/conftest.py), pooled as a deployment behind PgBouncer runs it, with one
# direct connection to lend.
protocol_server = site_fixture(
    "protocol_server",
    "pooled-claims",
    operations=E2E_OPERATIONS,
    limits=E2E_LIMITS,
    test_operations=True,
    environment={"DATABASE_POOL": "true", "DATABASE_DIRECT_POOL_SIZE": "1"},
)


class LongPoll:
    """An acquire of a session of its own for ``operation``, waiting in its long poll (its request row held
    without a response) once started."""

    def __init__(self, url: str, operation: str, *, wait_seconds: float = 20):
        worker = FakeWorker(url)
        _, session, _ = worker.register({operation: 1})
        self.request_id = uuid.uuid4().hex
        offers = {"offers": [{"operation": operation, "permits": 1}], "wait_seconds": wait_seconds}
        path = f"sessions/{session['session_id']}/acquire"
        self.answer: tuple[int, dict] | None = None
        self._thread = threading.Thread(target=self._answered, args=(worker, path, offers))
        self._thread.start()

    def _answered(self, worker: FakeWorker, path: str, offers: dict) -> None:
        self.answer = worker.post(path, offers, request_id=self.request_id)[:2]

    def answered(self) -> tuple[int, dict]:
        self._thread.join(60)
        return self.answer


def _waiting(polls: list[LongPoll]) -> list[LongPoll]:
    request_ids = [poll.request_id for poll in polls]
    wait_until(
        lambda: (
            WorkerRequest.objects.filter(request_id__in=request_ids, response_status__isnull=True).count() == len(polls)
        ),
        what="every long poll to wait",
    )
    return polls


def _echo_jobs(owner, count: int) -> set[str]:
    project = ProjectFactory(owner=owner, starter=True)
    submitted = [
        job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key=f"echo-{n}", project_id=project.pk)
        for n in range(count)
    ]
    return {str(submission.job_id) for submission in submitted}


def test_a_long_poll_waiting_for_work_leaves_the_one_direct_connection_to_the_claims_of_others(owner, protocol_server):
    url = protocol_server.url
    # Waits longer than a claim would wait for a connection from the pool (10 s) before giving up.
    [idle] = _waiting([LongPoll(url, "pdf.index.text/v1", wait_seconds=12)])
    echoes = _waiting([LongPoll(url, ECHO) for _ in range(2)])

    jobs = _echo_jobs(owner, 2)

    answers = [poll.answered() for poll in echoes]
    assert [status for status, _ in answers] == [200, 200]
    assert {body["claim"]["job_id"] for _, body in answers} == jobs
    assert idle.answered() == (200, {"claim": None, "claims": []})
