"""A transient failure is retried after the policy's backoff, with jitter, and the claim honours it.

A fake worker speaking the real protocol fails a job transiently twice, then delivers it: each retry waits
``retry_backoff_seconds × 2^(failures - 1)``, jittered in its upper half, before any claim may take it.
"""

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from processing.kernel.configuration import limits
from processing.models import JobState, ProcessingAttempt, ProcessingJob
from processing.queue.retry_policy import backoff_seconds
from tests.processing.worker_calls import (
    claim_the_next_job,
    post,
    queue_echo_jobs,
    session_with_one_echo_slot,
    stage_echo_output,
)

pytestmark = pytest.mark.django_db

BACKOFF = 2.0


def fail_transiently(claim: dict) -> None:
    report = {"failure_class": "transient_infrastructure", "code": "network", "message": "connection reset"}
    response = post(f"claims/{claim['claim_id']}/failure", report)
    assert response.json()["job_state"] == "queued", response.content


def backoff_comes_due(job_id: str) -> None:
    """What waiting out the backoff does to the job, without the test sleeping through it."""
    ProcessingJob.objects.filter(pk=job_id).update(next_attempt_at=timezone.now() - timedelta(hours=1))


def test_a_job_that_fails_transiently_twice_waits_out_growing_backoffs_then_succeeds(owner, configure_deployment):
    configure_deployment(limits={"retry_backoff_seconds": BACKOFF, "max_attempts": 3})
    [job_id] = queue_echo_jobs(owner, 1)
    session = session_with_one_echo_slot()
    waits = []

    for failures in (1, 2):
        claim = claim_the_next_job(session)
        assert claim["job_id"] == job_id and claim["attempt"] == failures
        fail_transiently(claim)
        job = ProcessingJob.objects.get(pk=job_id)
        # The database's clock on both ends: the attempt ended, and the retry was set, in one transaction.
        failed_at = ProcessingAttempt.objects.get(claim_id=claim["claim_id"]).ended_at
        waits.append((job.next_attempt_at - failed_at).total_seconds())
        ceiling = BACKOFF * 2 ** (failures - 1)
        assert ceiling / 2 <= waits[-1] <= ceiling, f"retry {failures} waits {waits[-1]:.2f} s"

        assert claim_the_next_job(session) is None, "no claim takes the job before its backoff is over"
        backoff_comes_due(job_id)

    claim = claim_the_next_job(session)
    assert claim["attempt"] == 3
    stage_echo_output(claim)
    assert post(f"claims/{claim['claim_id']}/delivery", {}).status_code == 200
    job = ProcessingJob.objects.get(pk=job_id)
    assert (job.state, job.attempt_count) == (JobState.SUCCEEDED, 3)


def test_backoffs_are_jittered_within_the_upper_half_of_their_ceiling():
    limit = limits()
    rng = random.Random(7)

    for failures in (1, 2, 3, 8):
        ceiling = min(limit.retry_backoff_max_seconds, limit.retry_backoff_seconds * 2 ** (failures - 1))
        delays = [backoff_seconds(failures, limit, rng=rng) for _ in range(200)]

        assert ceiling / 2 <= min(delays) and max(delays) <= ceiling
        assert max(delays) - min(delays) > ceiling / 4, "jittered, not one fixed delay"
