"""Promises of the worker protocol's claim that no other test held: a phase outside the closed vocabulary is
refused and changes nothing, and a claim tells the worker what to do, never whose work it is."""

import json

import pytest

from processing.models import ProcessingAttempt
from processing.submission.submit import job_submit
from tests.factories import ProjectFactory, UserFactory
from tests.processing import worker_calls as worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def claim(owner):
    worker.queue_echo_jobs(owner, 1)
    return worker.claim_the_next_job(worker.session_with_one_echo_slot())


@pytest.mark.parametrize("phase", ["bogus", "queued", "succeeded", "", 7])
def test_a_heartbeat_naming_a_phase_outside_the_vocabulary_is_refused_and_changes_nothing(claim, phase):
    attempt = ProcessingAttempt.objects.get(claim_id=claim["claim_id"])
    before = (attempt.phase, attempt.lease_expires_at)

    response = worker.post(f"claims/{claim['claim_id']}/heartbeat", {"phase": phase})

    assert (response.status_code, response.json()["error"]["code"]) == (422, "protocol_invalid")
    attempt.refresh_from_db()
    assert (attempt.phase, attempt.lease_expires_at) == before


def test_a_claim_carries_no_requester_or_project_identity():
    owner = UserFactory(username="identifiable-requester", email="requester@example.org")
    project = ProjectFactory(owner=owner, starter=True, name="An identifiable project name")
    job_submit(actor_id=owner.pk, operation_name=worker.ECHO, idempotency_key="identity", project_id=project.pk)
    claim = worker.claim_the_next_job(worker.session_with_one_echo_slot())

    body = json.dumps(claim)

    for identifying in (owner.username, owner.email, str(project.pk), project.name):
        assert identifying not in body
    assert not {"requester", "requester_id", "project", "project_id", "user", "user_id"} & _keys(claim)


def _keys(value) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in _keys(item)}
    if isinstance(value, list):
        return {key for item in value for key in _keys(item)}
    return set()
