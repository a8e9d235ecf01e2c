"""A terminal transition writes the state, one terminal commit and the state's outbox event together, once."""

import pytest
from django.db import IntegrityError, transaction

from processing.kernel.transitions import failure_fields, job_transition
from processing.models import JobState, OutboxEvent, ProcessingJob, TerminalCommit
from tests.processing.conftest import submit_build

pytestmark = pytest.mark.django_db

EVENTS = {
    JobState.CANCELLED: ["processing.job.cancelled"],
    JobState.FAILED: ["processing.job.failed"],
    JobState.EXPIRED: [],  # no event kind for an expiry
}


@pytest.fixture
def queued_job_id(owner_client, project):
    return submit_build(owner_client, project).json()["id"]


def _events_of(job_id) -> list[str]:
    return [event.kind for event in OutboxEvent.objects.all() if event.payload.get("job_id") == str(job_id)]


@pytest.mark.parametrize("state", list(EVENTS))
def test_a_terminal_transition_writes_its_commit_and_event_with_it(queued_job_id, state):
    failure = failure_fields("transient_infrastructure", "x", "Gone.")
    moved = job_transition(job_id=queued_job_id, to=state, only_from={JobState.QUEUED}, **failure)

    assert moved is True
    commit = TerminalCommit.objects.get(job_id=queued_job_id)
    assert commit.state == state
    job = commit.job
    assert (job.state, job.phase, job.failure_code, job.finalization_token) == (state, "complete", "x", None)
    assert job.completed_at == commit.committed_at
    assert _events_of(queued_job_id) == EVENTS[state]


def test_a_second_terminal_transition_moves_nothing_and_writes_nothing(queued_job_id):
    job_transition(job_id=queued_job_id, to=JobState.CANCELLED, only_from={JobState.QUEUED})

    moved = job_transition(job_id=queued_job_id, to=JobState.FAILED, **failure_fields("invalid_input", "x", "No."))

    assert moved is False
    assert TerminalCommit.objects.get(job_id=queued_job_id).state == JobState.CANCELLED
    assert _events_of(queued_job_id) == ["processing.job.cancelled"]


def test_the_database_refuses_a_second_terminal_commit_and_the_state_change_with_it(queued_job_id):
    TerminalCommit.objects.create(job_id=queued_job_id, state=JobState.CANCELLED, committed_at="2026-01-01T00:00Z")

    with pytest.raises(IntegrityError), transaction.atomic():
        job_transition(
            job_id=queued_job_id,
            to=JobState.FAILED,
            only_from={JobState.QUEUED},
            **failure_fields("invalid_input", "x", "No."),
        )

    assert TerminalCommit.objects.get(job_id=queued_job_id).state == JobState.CANCELLED
    assert ProcessingJob.objects.get(pk=queued_job_id).state == JobState.QUEUED
    assert _events_of(queued_job_id) == []


def test_a_guarded_transition_moves_only_when_the_guard_holds_and_writes_along_only_then(queued_job_id):
    ProcessingJob.objects.filter(pk=queued_job_id).update(failure_code="marker")
    mark_event = (
        "INSERT INTO processing_outboxevent (event_id, kind, payload, created_at, available_at, attempts, last_error)"
        " SELECT gen_random_uuid(), 'test.along', '{}'::jsonb, now(), now(), 0, '' FROM moved",
        [],
    )
    failure = failure_fields("invalid_input", "x", "No.")

    refused = job_transition(
        job_id=queued_job_id, to=JobState.FAILED, guard={"failure_code": "other"}, along=(mark_event,), **failure
    )
    assert refused is False
    assert not OutboxEvent.objects.filter(kind="test.along").exists()
    assert not TerminalCommit.objects.filter(job_id=queued_job_id).exists()

    moved = job_transition(
        job_id=queued_job_id, to=JobState.FAILED, guard={"failure_code": "marker"}, along=(mark_event,), **failure
    )
    assert moved is True
    assert OutboxEvent.objects.filter(kind="test.along").count() == 1
    assert TerminalCommit.objects.get(job_id=queued_job_id).state == JobState.FAILED


def test_a_guard_of_none_matches_an_empty_field_as_the_orms_filter_does(queued_job_id):
    moved = job_transition(job_id=queued_job_id, to=JobState.CANCELLED, guard={"finalization_token": None})

    assert moved is True
    assert TerminalCommit.objects.get(job_id=queued_job_id).state == JobState.CANCELLED
