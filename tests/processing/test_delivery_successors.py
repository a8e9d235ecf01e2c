"""A delivery may carry an offer: its answer then brings the next claims, so a busy agent needs no acquire."""

import hashlib
import json
import uuid

import pytest
from rest_framework.test import APIClient

from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob, WorkerSession
from processing.submission import job_submit
from tests.factories import ProjectFactory
from tests.processing.factories import WORKER_TOKEN

pytestmark = pytest.mark.django_db

PREFIX = "/internal/processing/v1"
ECHO = "test.echo/v1"
ONE_ECHO_PERMIT = [{"operation": ECHO, "permits": 1}]


@pytest.fixture(autouse=True)
def echo_deployment(configure_deployment):
    configure_deployment(operations=[ECHO], limits={"running_jobs_per_requester": 10, "running_jobs_per_project": 10})


def post(path: str, payload: dict, request_id: str | None = None):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {WORKER_TOKEN}")
    body = json.dumps({**payload, "request_id": request_id or uuid.uuid4().hex})
    return client.generic("POST", f"{PREFIX}/{path}", body, content_type="application/json")


def queue_echo_jobs(owner, count: int) -> list[str]:
    """``count`` queued echo jobs, oldest first, each of a project of its own (so none is a reuse hit)."""
    return [
        str(job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key=f"k{index}",
                       project_id=ProjectFactory(owner=owner, starter=True).pk).job_id)
        for index in range(count)
    ]  # fmt: skip


def session_with_one_echo_slot() -> str:
    processors = [{"operation": ECHO, "processor_contract": "echo/1", "slots": 1}]
    response = post("sessions", {"instance": "t", "protocol_version": "1", "processors": processors})
    assert response.status_code == 201, response.content
    return response.json()["session_id"]


def claim_the_next_job(session_id: str) -> dict:
    response = post(f"sessions/{session_id}/acquire", {"offers": ONE_ECHO_PERMIT, "wait_seconds": 0})
    return response.json()["claim"]


def stage_echo_output(claim: dict, data: bytes = b"echoed") -> None:
    declared = {"role": "echo", "media_type": "application/octet-stream", "filename": "echo", "size": len(data),
                "sha256": hashlib.sha256(data).hexdigest()}  # fmt: skip
    ticket = post(f"claims/{claim['claim_id']}/uploads", declared).json()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {WORKER_TOKEN}")
    response = client.generic("PUT", ticket["url"], data, content_type="application/octet-stream",
                              HTTP_X_QUIRE_TRANSFER_SECRET=ticket["secret"])  # fmt: skip
    assert response.status_code == 200, response.content


def test_a_delivery_with_an_offer_refills_the_slot_it_frees_with_the_next_job(owner):
    first, second, third = queue_echo_jobs(owner, 3)
    session_id = session_with_one_echo_slot()
    claim = claim_the_next_job(session_id)
    stage_echo_output(claim)

    response = post(f"claims/{claim['claim_id']}/delivery", {"offers": ONE_ECHO_PERMIT})

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["job_id"], body["job_state"]) == (first, JobState.SUCCEEDED)
    [successor] = body["claims"]
    assert successor["job_id"] == second, "FIFO, as an acquire takes"
    attempt = ProcessingAttempt.objects.get(claim_id=successor["claim_id"])
    assert (attempt.state, str(attempt.session_id)) == (AttemptState.RUNNING, session_id)
    assert ProcessingJob.objects.get(pk=third).state == JobState.QUEUED
    download = successor["input"]["download"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {WORKER_TOKEN}")
    data = client.get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET=download["secret"]).content
    assert hashlib.sha256(data).hexdigest() == successor["input"]["sha256"]


def test_a_delivery_without_an_offer_claims_nothing(owner):
    _, second = queue_echo_jobs(owner, 2)
    session_id = session_with_one_echo_slot()
    claim = claim_the_next_job(session_id)
    stage_echo_output(claim)

    body = post(f"claims/{claim['claim_id']}/delivery", {}).json()

    assert (body["job_state"], body["claims"]) == (JobState.SUCCEEDED, [])
    assert ProcessingJob.objects.get(pk=second).state == JobState.QUEUED


@pytest.mark.parametrize(
    "offers",
    [[{"operation": "latex.compile.pdf/v1", "permits": 1}], [{"operation": ECHO, "permits": 2}],
     [{"operation": ECHO, "permits": 1}, {"operation": ECHO, "permits": 1}]],
    ids=["unregistered operation", "more permits than slots", "an operation twice"],
)  # fmt: skip
def test_a_delivery_with_an_impossible_offer_is_422_and_changes_nothing(owner, offers):
    first, second = queue_echo_jobs(owner, 2)
    session_id = session_with_one_echo_slot()
    claim = claim_the_next_job(session_id)
    stage_echo_output(claim)

    response = post(f"claims/{claim['claim_id']}/delivery", {"offers": offers})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "protocol_invalid"
    assert ProcessingAttempt.objects.get(claim_id=claim["claim_id"]).state == AttemptState.RUNNING
    assert [ProcessingJob.objects.get(pk=job).state for job in (first, second)] == [JobState.RUNNING, JobState.QUEUED]


def test_a_draining_sessions_delivery_is_accepted_but_claims_nothing(owner):
    _, second = queue_echo_jobs(owner, 2)
    session_id = session_with_one_echo_slot()
    claim = claim_the_next_job(session_id)
    stage_echo_output(claim)
    assert post(f"sessions/{session_id}/drain", {}).status_code == 200

    body = post(f"claims/{claim['claim_id']}/delivery", {"offers": ONE_ECHO_PERMIT}).json()

    assert (body["job_state"], body["claims"]) == (JobState.SUCCEEDED, [])
    assert ProcessingJob.objects.get(pk=second).state == JobState.QUEUED


def test_a_lapsed_sessions_delivery_is_accepted_but_claims_nothing(owner):
    from datetime import timedelta

    from django.utils import timezone

    _, second = queue_echo_jobs(owner, 2)
    session_id = session_with_one_echo_slot()
    claim = claim_the_next_job(session_id)
    stage_echo_output(claim)
    WorkerSession.objects.filter(pk=session_id).update(expires_at=timezone.now() - timedelta(hours=1))

    body = post(f"claims/{claim['claim_id']}/delivery", {"offers": ONE_ECHO_PERMIT}).json()

    assert (body["job_state"], body["claims"]) == (JobState.SUCCEEDED, [])
    assert ProcessingJob.objects.get(pk=second).state == JobState.QUEUED


def test_a_retried_delivery_with_an_offer_returns_the_same_claim_and_makes_no_other(owner):
    _, second, third = queue_echo_jobs(owner, 3)
    session_id = session_with_one_echo_slot()
    claim = claim_the_next_job(session_id)
    stage_echo_output(claim)
    path, payload = f"claims/{claim['claim_id']}/delivery", {"offers": ONE_ECHO_PERMIT}

    first = post(path, payload, request_id="deliver-and-refill")
    again = post(path, payload, request_id="deliver-and-refill")

    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert [successor["job_id"] for successor in first.json()["claims"]] == [second]
    assert ProcessingAttempt.objects.filter(job_id=second).count() == 1
    assert ProcessingJob.objects.get(pk=third).state == JobState.QUEUED
