"""Core enforces the wall time too: a claim heartbeating past it (plus one lease of grace) fails the job."""

from datetime import timedelta

import pytest

from processing.kernel.configuration import limits
from processing.models import AttemptState, FailureClass, JobState, ProcessingAttempt, ProcessingJob
from tests.processing.worker_calls import claim_the_next_job, post, queue_echo_jobs, session_with_one_echo_slot

pytestmark = pytest.mark.django_db


def started_ago(claim: dict, seconds: float) -> None:
    attempt = ProcessingAttempt.objects.get(claim_id=claim["claim_id"])
    ProcessingAttempt.objects.filter(pk=attempt.pk).update(started_at=attempt.started_at - timedelta(seconds=seconds))


def heartbeat(claim: dict):
    return post(f"claims/{claim['claim_id']}/heartbeat", {"phase": "processing"})


@pytest.fixture
def claim(owner):
    queue_echo_jobs(owner, 1)
    return claim_the_next_job(session_with_one_echo_slot())


def test_a_claim_within_its_wall_time_and_grace_is_renewed(claim):
    limit = limits()
    started_ago(claim, limit.wall_seconds + limit.lease_seconds - 5)

    response = heartbeat(claim)

    assert response.status_code == 200, response.content
    assert ProcessingJob.objects.get(pk=claim["job_id"]).state == JobState.RUNNING


def test_a_claim_heartbeating_past_its_wall_time_is_failed_resource_limit_and_told_it_lost_the_claim(claim):
    limit = limits()
    # A minute past, not a second: behind a pooler the claim runs on a connection of its own, in real time, while
    # this test's own transaction (whose now() the heartbeat may read) began before the fixtures, which take
    # more than a second on a busy machine.
    started_ago(claim, limit.wall_seconds + limit.lease_seconds + 60)

    response = heartbeat(claim)

    assert response.status_code == 409 and response.json()["error"]["code"] == "claim_lost"
    assert response.json()["error"]["details"] == {"code": "wall_time_exceeded"}
    job = ProcessingJob.objects.get(pk=claim["job_id"])
    assert (job.state, job.failure_class, job.failure_code) == (
        JobState.FAILED,
        FailureClass.RESOURCE_LIMIT,
        "wall_time_exceeded",
    )
    assert ProcessingAttempt.objects.get(claim_id=claim["claim_id"]).state == AttemptState.FAILED
    assert heartbeat(claim).status_code == 409, "and it stays lost"
