"""A delivery may carry an offer: its answer then brings the next claims, so a busy agent needs no acquire."""

import hashlib

import pytest

from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob, WorkerRequest, WorkerSession
from tests.processing.worker_calls import (
    ECHO,
    ONE_ECHO_PERMIT,
    claim_the_next_job,
    post,
    queue_echo_jobs,
    session_with_one_echo_slot,
    stage_echo_output,
    worker_client,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def echo_deployment(configure_deployment):
    configure_deployment(operations=[ECHO], limits={"running_jobs_per_requester": 10, "running_jobs_per_project": 10})


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
    data = worker_client().get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET=download["secret"]).content
    assert hashlib.sha256(data).hexdigest() == successor["input"]["sha256"]


def test_finalization_takes_the_job_and_its_outputs_from_the_delivery_statement(owner, monkeypatch):
    """The delivery function hands back what the finalizer checks: no second read of the job and its bytes."""
    from processing.finalization import finalize as finalization

    def read_again(job_id):
        raise AssertionError("finalization read the delivered job again")

    monkeypatch.setattr(finalization, "delivered_read", read_again)
    [job] = queue_echo_jobs(owner, 1)
    claim = claim_the_next_job(session_with_one_echo_slot())
    stage_echo_output(claim, data=b"checked bytes")

    body = post(f"claims/{claim['claim_id']}/delivery", {}).json()

    assert (body["job_id"], body["job_state"]) == (job, JobState.SUCCEEDED)
    [artifact] = ProcessingJob.objects.get(pk=job).artifacts.all()
    assert artifact.sha256 == hashlib.sha256(b"checked bytes").hexdigest()


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


def test_a_delivery_rerun_because_its_answer_was_never_stored_claims_nothing_more(owner):
    _, second = queue_echo_jobs(owner, 2)
    session_id = session_with_one_echo_slot()
    claim = claim_the_next_job(session_id)
    stage_echo_output(claim)
    path = f"claims/{claim['claim_id']}/delivery"
    assert post(path, {}, request_id="answer-lost").json()["job_state"] == JobState.SUCCEEDED
    WorkerRequest.objects.filter(request_id="answer-lost").delete()  # as if the server died before storing it

    rerun = post(path, {"offers": ONE_ECHO_PERMIT}, request_id="answer-lost")

    assert rerun.status_code == 200, rerun.content
    assert (rerun.json()["job_state"], rerun.json()["claims"]) == (JobState.SUCCEEDED, [])
    assert ProcessingJob.objects.get(pk=second).state == JobState.QUEUED
