"""Several Core replicas each run the maintenance loop: sweeps at the same moment, on separate connections,
do each piece of work once (a lost lease is retried once, a deadline expires a job once) and leave every
promise of the invariant checker holding."""

from datetime import timedelta

import pytest

from processing.kernel.clock import db_now
from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob, SessionState, WorkerSession
from processing.queue.claims import claim_acquire
from processing.upkeep.invariants import check_all
from processing.upkeep.reapers import sweep
from tests.concurrency import run_together
from tests.factories import UserFactory
from tests.processing import worker_calls as worker
from tests.processing.factories import WorkerSessionFactory
from tests.processing.sweeps import SWEEP_DATABASES

pytestmark = pytest.mark.django_db(transaction=True, databases=SWEEP_DATABASES)  # the sweeps: other connections

LOST, EXPIRED = 6, 2


def jobs_with_lost_leases() -> list[str]:
    # Each of its own requester: running limits do not stop the claims.
    job_ids = [job_id for _ in range(LOST) for job_id in worker.queue_echo_jobs(UserFactory(), 1)]
    session = WorkerSessionFactory(processors={worker.ECHO: LOST})
    for _ in job_ids:
        assert claim_acquire(session_id=session.pk, offers={worker.ECHO: 1}) is not None
    ProcessingAttempt.objects.filter(session=session).update(lease_expires_at=db_now() - timedelta(seconds=1))
    return job_ids


def jobs_past_their_queue_deadline(owner) -> list:
    return jobs_past_their_queue_deadline_of(owner, count=EXPIRED)


def test_three_sweeps_at_once_do_each_piece_of_work_once(owner):
    lost = jobs_with_lost_leases()
    past_deadline = jobs_past_their_queue_deadline(owner)
    gone = WorkerSessionFactory(expires_at=db_now() - timedelta(seconds=1))
    reports = []

    errors = run_together(*[lambda: reports.append(sweep()) for _ in range(3)])

    assert errors == [] and len(reports) == 3
    assert [report.failed for report in reports] == [[], [], []]
    assert sum(report.counts["leases_lost"] for report in reports) == LOST
    assert sum(report.counts["deadlines_expired"] for report in reports) == EXPIRED
    assert sum(report.counts["sessions_expired"] for report in reports) == 1
    for job in ProcessingJob.objects.filter(pk__in=lost):
        assert (job.state, job.attempts.filter(state=AttemptState.LOST).count()) == (JobState.QUEUED, 1), job
    assert set(ProcessingJob.objects.filter(pk__in=past_deadline).values_list("state", flat=True)) == {JobState.EXPIRED}
    assert WorkerSession.objects.get(pk=gone.pk).state == SessionState.EXPIRED
    assert check_all(include_outbox=False) == []


@pytest.mark.parametrize("round_", range(5))
def test_a_claim_racing_the_queue_expiry_ends_the_job_in_exactly_one_outcome(owner, round_):
    """A queued job past its deadline is both claimable (the claim does not read deadlines) and due to expire:
    a claim and a sweep at the same moment, on their own connections, leave it claimed or expired, never both."""
    [job_id] = jobs_past_their_queue_deadline_of(owner, count=1)
    session = WorkerSessionFactory(processors={worker.ECHO: 1})
    claims, sweeps = [], []

    errors = run_together(
        lambda: claims.append(claim_acquire(session_id=session.pk, offers={worker.ECHO: 1})),
        lambda: sweeps.append(sweep()),
    )

    assert errors == []
    claimed, expired = claims[0] is not None, sweeps[0].counts["deadlines_expired"] == 1
    assert not (claimed and expired)
    sweep()  # a claim that skipped the row the sweep held, or the other way round, leaves it to the next sweep
    job = ProcessingJob.objects.get(pk=job_id)
    attempts = list(job.attempts.values_list("state", flat=True))
    if claimed:
        assert (job.state, attempts) == (JobState.RUNNING, [AttemptState.RUNNING])
    else:
        assert (job.state, attempts) == (JobState.EXPIRED, [])
    assert check_all(include_outbox=False) == []


def jobs_past_their_queue_deadline_of(owner, *, count: int) -> list:
    jobs = ProcessingJob.objects.filter(pk__in=worker.queue_echo_jobs(owner, count))
    jobs.update(deadline_at=db_now() - timedelta(seconds=1))
    return list(jobs.values_list("pk", flat=True))
