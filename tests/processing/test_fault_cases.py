"""Fault cases at service level with real concurrent connections. Boundaries are crossed in SQL, not by sleeping."""

import contextlib
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from processing import delivery as delivery_module
from processing.cancellation import job_cancel
from processing.claims import claim_acquire
from processing.delivery import Diagnostics, attempt_fail, delivery_accept
from processing.exceptions import ClaimLost, JobCancelled
from processing.finalization import job_finalize
from processing.maintenance import leases_expire, sweep
from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob, TerminalCommit
from processing.submission import job_submit
from tests.factories import ProjectFactory
from tests.processing.concurrency import run_together
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import stage

pytestmark = pytest.mark.django_db(transaction=True)

ECHO = "test.echo/v1"
ROOMY = ("running_jobs_per_requester", "running_jobs_per_project", "active_jobs_per_requester",
         "active_jobs_per_project")  # fmt: skip


@pytest.fixture(autouse=True)
def roomy(configure_deployment):
    configure_deployment(limits=dict.fromkeys(ROOMY, 1000))


def _job(owner, key: str) -> str:
    project = ProjectFactory(owner=owner, starter=True)
    return str(job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key=key, project_id=project.pk).job_id)


def _claim(session):
    claim = claim_acquire(session_id=session.pk, offers={ECHO: 1})
    assert claim is not None
    return claim


def _expire(claim) -> None:
    ProcessingAttempt.objects.filter(claim_id=claim.claim_id).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )


def _deliver(claim):
    stage(claim, "echo", "application/octet-stream", "echo.json", b"{}")
    job_id, token = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())
    return job_finalize(job_id=job_id, token=token)


def test_an_older_attempt_failing_after_a_newer_one_finished_changes_nothing(owner):
    job_id = _job(owner, "old-vs-new")
    session = WorkerSessionFactory(processors={ECHO: 2})
    first = _claim(session)
    _expire(first)
    sweep()
    second = _claim(session)
    assert _deliver(second) == JobState.SUCCEEDED

    with pytest.raises(ClaimLost):
        attempt_fail(claim_id=first.claim_id, failure_class="transient_infrastructure", code="late", message="late",
                     diagnostics=Diagnostics())  # fmt: skip

    job = ProcessingJob.objects.get(pk=job_id)
    assert job.state == JobState.SUCCEEDED and job.artifacts.get().source_attempt.claim_id == second.claim_id


def test_a_worker_completing_between_the_reapers_read_and_its_update_wins(owner, monkeypatch):
    job_id = _job(owner, "completion-wins")
    claim = _claim(WorkerSessionFactory(processors={ECHO: 1}))
    stage(claim, "echo", "application/octet-stream", "echo.json", b"{}")
    holding, release = threading.Event(), threading.Event()
    real_accept = delivery_module._accept

    def accept_slowly(attempt, now, diagnostics):
        holding.set()  # the job row is locked and the claim was current when checked
        release.wait(30)
        return real_accept(attempt, now, diagnostics)

    monkeypatch.setattr(delivery_module, "_accept", accept_slowly)
    outcome = {}

    def deliver():
        try:
            outcome["token"] = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())[1]
        finally:
            connection.close()

    worker = threading.Thread(target=deliver)
    worker.start()
    assert holding.wait(30)
    _expire(claim)  # the lease passes while the delivery is under way
    assert leases_expire() == 0  # the reaper skips the locked job instead of marking the attempt lost
    release.set()
    worker.join(30)

    assert job_finalize(job_id=job_id, token=outcome["token"]) == JobState.SUCCEEDED
    assert ProcessingAttempt.objects.get(claim_id=claim.claim_id).state == AttemptState.DELIVERED


def test_two_reapers_at_once_make_no_double_transitions(owner):
    session = WorkerSessionFactory(processors={ECHO: 50})
    jobs = [_job(owner, f"reap-{index}") for index in range(30)]
    for _ in jobs:
        _expire(_claim(session))

    assert not run_together(sweep, sweep)

    for job_id in jobs:
        job = ProcessingJob.objects.get(pk=job_id)
        assert job.state == JobState.QUEUED
        assert list(job.attempts.values_list("state", flat=True)) == [AttemptState.LOST]
    assert not TerminalCommit.objects.exists()


def test_cancel_racing_delivery_ends_in_exactly_one_outcome(owner):
    session = WorkerSessionFactory(processors={ECHO: 100})
    outcomes = set()
    for round_number in range(20):
        job_id = _job(owner, f"cancel-deliver-{round_number}")
        claim = _claim(session)
        stage(claim, "echo", "application/octet-stream", "echo.json", b"{}")

        def deliver(claim=claim):
            with contextlib.suppress(JobCancelled):  # the cancel won: that is one of the two outcomes
                delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())

        def cancel(job_id=job_id):
            job_cancel(actor_id=owner.pk, job_id=job_id)

        assert not run_together(deliver, cancel)
        job = ProcessingJob.objects.get(pk=job_id)
        if job.state == JobState.CANCELLED:
            assert job.artifacts.count() == 0 and job.attempts.get().state == AttemptState.CANCELLED
        else:
            assert job.state == JobState.FINALIZING, f"round {round_number}: {job.state}"
            assert job_cancel(actor_id=owner.pk, job_id=job_id).state == JobState.FINALIZING  # not cancellable now
            assert job_finalize(job_id=job_id, token=job.finalization_token) == JobState.SUCCEEDED
        outcomes.add(job.state)
    assert outcomes <= {JobState.CANCELLED, JobState.FINALIZING}


def test_cancel_racing_the_reapers_rescue_always_ends_cancelled(owner):
    session = WorkerSessionFactory(processors={ECHO: 100})
    for round_number in range(20):
        job_id = _job(owner, f"cancel-reaper-{round_number}")
        _expire(_claim(session))

        assert not run_together(leases_expire, lambda job_id=job_id: job_cancel(actor_id=owner.pk, job_id=job_id))

        job = ProcessingJob.objects.get(pk=job_id)
        if job.state == JobState.RUNNING:  # cancel came first and became a request; the reaper ran before it
            leases_expire()
            job.refresh_from_db()
        assert job.state == JobState.CANCELLED, f"round {round_number}: {job.state}"
        assert not job.attempts.filter(state=AttemptState.RUNNING).exists()


def test_sessions_idle_in_a_transaction_are_ended_by_the_server(owner):
    with connection.cursor() as cursor:
        cursor.execute("SHOW idle_in_transaction_session_timeout")
        assert cursor.fetchone()[0] == "1min"


def test_claims_go_on_while_a_long_transaction_holds_the_xmin_horizon(owner):
    import psycopg

    params = {k: v for k, v in connection.get_connection_params().items() if k not in ("cursor_factory", "context")}
    session = WorkerSessionFactory(processors={ECHO: 100})
    with psycopg.connect(**params) as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT count(*) FROM processing_processingjob").fetchone()  # the snapshot is now pinned
        jobs = [_job(owner, f"xmin-{index}") for index in range(10)]
        claims = [_claim(session) for _ in jobs]
        holder.rollback()
    assert {str(claim.job_id) for claim in claims} == set(jobs)
