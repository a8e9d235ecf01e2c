"""Fault cases at service level with real concurrent connections. Boundaries are crossed in SQL, not by sleeping
(but one lease that must pass while its row is locked: that test waits for the database clock)."""

import contextlib
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.db.models.expressions import RawSQL
from django.utils import timezone

from processing.exceptions import ClaimLost, JobCancelled
from processing.finalization.finalize import job_finalize
from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob, TerminalCommit
from processing.queue.cancellation import job_cancel
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, attempt_fail, delivery_accept
from processing.submission.submit import job_submit
from processing.upkeep.reapers import leases_expire, sweep
from tests.concurrency import backend_waiting_on_lock, nudged, run_together, separate_connection
from tests.factories import ProjectFactory
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import stage
from tests.processing.sweeps import SWEEP_DATABASES

pytestmark = pytest.mark.django_db(transaction=True, databases=SWEEP_DATABASES)

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
        lease_expires_at=timezone.now() - timedelta(hours=1)
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
        attempt_fail(
            claim_id=first.claim_id,
            failure_class="transient_infrastructure",
            code="late",
            message="late",
            diagnostics=Diagnostics(),
        )

    job = ProcessingJob.objects.get(pk=job_id)
    assert job.state == JobState.SUCCEEDED and job.artifacts.get().source_attempt.claim_id == second.claim_id


def test_a_worker_completing_between_the_reapers_read_and_its_update_wins(owner):
    job_id = _job(owner, "completion-wins")
    claim = _claim(WorkerSessionFactory(processors={ECHO: 1}))
    stage(claim, "echo", "application/octet-stream", "echo.json", b"{}")
    # The lease runs out one second from now, by the database's clock.
    ProcessingAttempt.objects.filter(claim_id=claim.claim_id).update(lease_expires_at=TRANSACTION_NOW_PLUS_SECOND)
    holding, release = threading.Event(), threading.Event()
    outcome = {}

    def deliver():
        try:
            with transaction.atomic():  # the delivery's job lock is held until this commits
                outcome["token"] = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())[1]
                holding.set()
                release.wait(30)
        finally:
            connection.close()

    worker = threading.Thread(target=deliver)
    worker.start()
    assert holding.wait(30)  # accepted while the claim was current
    _database_clock_passes(claim)  # the lease passes while the delivery is under way
    assert leases_expire() == 0  # the reaper skips the locked job instead of marking the attempt lost
    release.set()
    worker.join(30)

    assert job_finalize(job_id=job_id, token=outcome["token"]) == JobState.SUCCEEDED
    assert ProcessingAttempt.objects.get(claim_id=claim.claim_id).state == AttemptState.DELIVERED


TRANSACTION_NOW_PLUS_SECOND = RawSQL("now() + interval '1 second'", [])


def _database_clock_passes(claim) -> None:
    """Wait until the database's clock is past the attempt's lease (reading it does not wait on its lock)."""
    lease = ProcessingAttempt.objects.values_list("lease_expires_at", flat=True).get(claim_id=claim.claim_id)
    with connection.cursor() as cursor:
        for _ in range(100):
            cursor.execute("SELECT clock_timestamp() > %s", [lease])
            if cursor.fetchone()[0]:
                return
            time.sleep(0.05)
    raise AssertionError("the database clock did not pass the lease")


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

        assert not run_together(*nudged(deliver, cancel, round_number))
        job = ProcessingJob.objects.get(pk=job_id)
        if job.state == JobState.CANCELLED:
            assert job.artifacts.count() == 0 and job.attempts.get().state == AttemptState.CANCELLED
        else:
            assert job.state == JobState.FINALIZING, f"round {round_number}: {job.state}"
            assert job_cancel(actor_id=owner.pk, job_id=job_id).state == JobState.FINALIZING  # not cancellable now
            assert job_finalize(job_id=job_id, token=job.finalization_token) == JobState.SUCCEEDED
        outcomes.add(job.state)
    assert outcomes == {JobState.CANCELLED, JobState.FINALIZING}, "each side won some rounds: both were tried"


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
    session = WorkerSessionFactory(processors={ECHO: 100})
    with separate_connection() as holder:
        holder.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        holder.execute("SELECT count(*) FROM processing_processingjob").fetchone()  # the snapshot is now pinned
        jobs = [_job(owner, f"xmin-{index}") for index in range(10)]
        claims = [_claim(session) for _ in jobs]
        holder.rollback()
    assert {str(claim.job_id) for claim in claims} == set(jobs)


def test_a_finalizer_that_crashes_fails_the_job_instead_of_leaving_it_finalizing(owner, monkeypatch):
    from processing.finalization import artifacts

    def crash(job, staged):
        raise TypeError("unexpected shape")

    monkeypatch.setattr(artifacts, "staged_bytes_verified", crash)
    job_id = _job(owner, "finalizer-crash")

    assert _deliver(_claim(WorkerSessionFactory(processors={ECHO: 1}))) == JobState.FAILED
    job = ProcessingJob.objects.get(pk=job_id)
    assert (job.failure_class, job.failure_code) == ("internal_contract_violation", "finalizer_error")
    assert not job.artifacts.exists()


def test_a_publication_whose_own_work_crashes_fails_the_job_and_publishes_nothing(owner, monkeypatch):
    from processing.finalization.publication import Publication
    from processing.finalization.registry import FINALIZERS

    def crash(locked_job):
        raise ValueError("cannot publish")

    def with_crashing_work(job, staged):
        return Publication(publish=staged, before_publish=crash)

    monkeypatch.setitem(FINALIZERS, ECHO, with_crashing_work)
    job_id = _job(owner, "publication-crash")

    assert _deliver(_claim(WorkerSessionFactory(processors={ECHO: 1}))) == JobState.FAILED
    job = ProcessingJob.objects.get(pk=job_id)
    assert job.failure_code == "finalizer_error" and not job.artifacts.exists()
    assert TerminalCommit.objects.filter(job_id=job_id).count() == 1


def test_a_one_statement_publication_refused_by_the_database_fails_the_job_and_publishes_nothing(owner, monkeypatch):
    from processing.finalization.publication import Publication

    def artifacts_without_a_role(self, attempt):
        return "INSERT INTO processing_processingartifact (id) SELECT gen_random_uuid() FROM moved", []

    monkeypatch.setattr(Publication, "artifacts_insert_sql", artifacts_without_a_role)
    job_id = _job(owner, "one-statement-publication-refused")

    assert _deliver(_claim(WorkerSessionFactory(processors={ECHO: 1}))) == JobState.FAILED
    job = ProcessingJob.objects.get(pk=job_id)
    assert job.failure_code == "finalizer_error" and not job.artifacts.exists()
    assert list(TerminalCommit.objects.filter(job_id=job_id).values_list("state", flat=True)) == [JobState.FAILED]


def test_a_lost_database_during_finalization_leaves_the_job_for_recovery(owner, monkeypatch):
    from django.db import OperationalError

    from processing.finalization import artifacts

    def database_gone(job, staged):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(artifacts, "staged_bytes_verified", database_gone)
    job_id = _job(owner, "finalizer-database-gone")

    with pytest.raises(OperationalError):
        _deliver(_claim(WorkerSessionFactory(processors={ECHO: 1})))
    assert ProcessingJob.objects.get(pk=job_id).state == JobState.FINALIZING


def test_a_delivery_waiting_on_the_job_while_it_is_released_and_claimed_again_is_refused(owner):
    from django.db import transaction

    from processing.queue.delivery import attempt_release

    job_id = _job(owner, "stale-delivery")
    old = _claim(WorkerSessionFactory(processors={ECHO: 1}))
    stage(old, "echo", "application/octet-stream", "echo.json", b"{}")
    locked, go = threading.Event(), threading.Event()
    deliverer_pid: list[int] = []
    outcome: dict = {}

    def release_and_claim_again():
        with transaction.atomic():
            ProcessingJob.objects.select_for_update().get(pk=job_id)
            locked.set()
            assert go.wait(timeout=30)
            attempt_release(claim_id=old.claim_id)
            outcome["new"] = _claim(WorkerSessionFactory(processors={ECHO: 1}))
        connection.close()

    def deliver_old_claim():
        deliverer_pid.append(connection.cursor().connection.info.backend_pid)
        try:
            delivery_accept(claim_id=old.claim_id, diagnostics=Diagnostics())
            outcome["delivery"] = "accepted"
        except ClaimLost:
            outcome["delivery"] = "claim lost"
        finally:
            connection.close()

    holder = threading.Thread(target=release_and_claim_again)
    holder.start()
    assert locked.wait(timeout=30)
    deliverer = threading.Thread(target=deliver_old_claim)
    deliverer.start()
    while not (deliverer_pid and backend_waiting_on_lock(deliverer_pid[0])):
        assert deliverer.is_alive(), outcome
    go.set()
    holder.join(timeout=30)
    deliverer.join(timeout=30)

    assert outcome["delivery"] == "claim lost"
    job = ProcessingJob.objects.get(pk=job_id)
    assert job.state == JobState.RUNNING
    assert ProcessingAttempt.objects.get(claim_id=outcome["new"].claim_id).state == AttemptState.RUNNING
    assert _deliver(outcome["new"]) == JobState.SUCCEEDED


def test_a_released_job_waits_in_the_queue_afresh_instead_of_expiring_at_the_next_sweep(owner):
    from processing.queue.delivery import attempt_release
    from processing.upkeep.reapers import deadlines_expire

    job_id = _job(owner, "released-late")
    claim = _claim(WorkerSessionFactory(processors={ECHO: 1}))
    ProcessingJob.objects.filter(pk=job_id).update(deadline_at=timezone.now() - timedelta(hours=1))

    assert attempt_release(claim_id=claim.claim_id) == JobState.QUEUED
    deadlines_expire()
    assert ProcessingJob.objects.get(pk=job_id).state == JobState.QUEUED
