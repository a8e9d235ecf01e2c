"""End-to-end conformance of the worker protocol: a fake worker over real HTTP against a live server."""

import hashlib
import io
import json
import tarfile
import threading
import time

import pytest

from processing.models import JobState, ProcessingAttempt, ProcessingJob
from tests.factories import ProjectFactory, bearer_token_for
from tests.processing.e2e.conftest import FakeWorker, RawHttp
from tests.processing.lifecycle import pdf_bytes

pytestmark = pytest.mark.django_db(transaction=True)

LATEX = "latex.compile.pdf/v1"


def retried(send):
    """A retry's answer as a client that retries at once gets it: the first request's response is stored once it
    has been sent (processing/protocol/replay.py), so the retry may meet the row still held, 409
    request_in_progress, which a client retries (as the agent does) until it gets the stored response."""
    deadline = time.monotonic() + 10
    while True:
        status, body, raw = send()
        if not (status == 409 and body["error"]["code"] == "request_in_progress") or time.monotonic() > deadline:
            return status, body, raw
        time.sleep(0.01)


@pytest.fixture
def author(owner, protocol_server):
    return RawHttp(protocol_server.url, bearer_token_for(owner))


@pytest.fixture
def worker(protocol_server):
    return FakeWorker(protocol_server.url)


def _capability(author, operation=LATEX):
    _, body, _ = author.json("GET", "/v1/processing/capabilities")
    return {item["operation"]: item["state"] for item in body["capabilities"]}.get(operation)


def _build(author, project, key):
    status, body, _ = author.json("POST", f"/v1/projects/{project.pk}/builds", {}, headers={"Idempotency-Key": key})
    assert status in (200, 202), body
    return body


def _upload(worker, claim, role, media_type, filename, data, *, request_id=None, declared_sha=None):
    sha = declared_sha or hashlib.sha256(data).hexdigest()
    status, ticket, raw = worker.post(
        f"claims/{claim['claim_id']}/uploads",
        {"role": role, "media_type": media_type, "filename": filename, "size": len(data), "sha256": sha},
        request_id=request_id,
    )
    return status, ticket, raw


def _put(worker, ticket, data):
    return worker.request(
        "PUT",
        ticket["url"],
        body=data,
        headers={"X-Quire-Transfer-Secret": ticket["secret"], "Content-Type": "application/octet-stream"},
    )


def test_the_worker_protocol_end_to_end(owner, author, worker):
    project = ProjectFactory(owner=owner, starter=True)

    # Configured identity, no live session: waiting.
    assert _capability(author) == "waiting"

    # Registration replay: the same request_id gives the same bytes and one session.
    status, session, first_raw = worker.register({LATEX: 1}, request_id="register-0001")
    assert status == 201
    status, _, again_raw = retried(lambda: worker.register({LATEX: 1}, request_id="register-0001"))
    assert (status, again_raw) == (201, first_raw)
    assert _capability(author) == "available"

    # An offer naming an unregistered operation or too many permits is refused.
    sid = session["session_id"]
    for offers in ([{"operation": "test.echo/v1", "permits": 1}], [{"operation": LATEX, "permits": 2}]):
        status, body, _ = worker.post(f"sessions/{sid}/acquire", {"offers": offers, "wait_seconds": 0})
        assert (status, body["error"]["code"]) == (422, "protocol_invalid")

    job = _build(author, project, "e2e-build")

    # Acquire replay returns the identical claim.
    acquire = {"offers": [{"operation": LATEX, "permits": 1}], "wait_seconds": 5}
    status, claimed, claim_raw = worker.post(f"sessions/{sid}/acquire", acquire, request_id="acquire-0001")
    assert status == 200 and claimed["claim"]["job_id"] == job["id"]
    _, _, replay_raw = retried(lambda: worker.post(f"sessions/{sid}/acquire", acquire, request_id="acquire-0001"))
    assert replay_raw == claim_raw
    claim = claimed["claim"]
    assert ProcessingAttempt.objects.filter(job_id=job["id"]).count() == 1
    assert claim["request"]["options"] == {} and claim["request"]["input_schema"] == "project-bundle/v1"

    # The input download matches the claim's size and digest.
    download = claim["input"]["download"]
    status, headers, data = worker.request(
        "GET", download["url"], headers={"X-Quire-Transfer-Secret": download["secret"]}
    )
    assert status == 200 and len(data) == claim["input"]["size"]
    assert hashlib.sha256(data).hexdigest() == claim["input"]["sha256"] == headers["X-Quire-Sha256"]
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        assert json.loads(archive.extractfile("manifest.json").read())["entry_path"] == "main.tex"

    # Upload ticket replay, the same bytes twice, and a digest mismatch.
    pdf = pdf_bytes(3)
    status, ticket, ticket_raw = _upload(
        worker, claim, "pdf", "application/pdf", "main.pdf", pdf, request_id="ticket-0001"
    )
    assert status == 201
    _, _, replay_raw = retried(
        lambda: _upload(worker, claim, "pdf", "application/pdf", "main.pdf", pdf, request_id="ticket-0001")
    )
    assert replay_raw == ticket_raw
    assert _put(worker, ticket, pdf)[0] == 200
    assert _put(worker, ticket, pdf)[0] == 200
    _, wrong_ticket, _ = _upload(worker, claim, "log", "text/plain", "main.log", b"log", declared_sha="0" * 64)
    status, _, body = _put(worker, wrong_ticket, b"log")
    assert status == 422 and json.loads(body)["error"]["code"] == "output_rejected"
    assert _put(worker, ticket, pdf[:-1])[0] == 422  # not the declared size
    status, log_ticket, _ = _upload(worker, claim, "log", "text/plain", "main.log", b"Output written on main.pdf")
    assert _put(worker, log_ticket, b"Output written on main.pdf")[0] == 200

    # Delivery replay: one finalization, the same answer twice.
    delivery = {"diagnostics": {"log": "all good", "entries": []}}
    status, delivered, delivered_raw = worker.post(
        f"claims/{claim['claim_id']}/delivery", delivery, request_id="deliver-0001"
    )
    assert (status, delivered["job_state"]) == (200, "succeeded")
    _, _, replay_raw = retried(
        lambda: worker.post(f"claims/{claim['claim_id']}/delivery", delivery, request_id="deliver-0001")
    )
    assert replay_raw == delivered_raw

    # Artifacts download byte-identical through the public API.
    _, finished, _ = author.json("GET", f"/v1/processing/jobs/{job['id']}")
    pdf_artifact = next(a for a in finished["artifacts"] if a["role"] == "pdf")
    assert author.request("GET", pdf_artifact["url"])[2] == pdf

    # An identical resubmission is a reuse hit with no attempt.
    status, hit, _ = author.json("POST", f"/v1/projects/{project.pk}/builds", {}, headers={"Idempotency-Key": "again"})
    assert (status, hit["state"], hit["cache_hit"]) == (202, "succeeded", True)
    assert not ProcessingAttempt.objects.filter(job_id=hit["id"]).exists()

    # Drain: no new claims, even with work queued.
    _build(author, ProjectFactory(owner=owner, starter=True), "after-drain")
    assert worker.post(f"sessions/{sid}/drain", {})[1]["state"] == "draining"
    status, nothing, _ = worker.post(f"sessions/{sid}/acquire", {**acquire, "wait_seconds": 0})
    assert (status, nothing["claim"]) == (200, None)
    assert _capability(author) == "waiting"


def test_one_slot_never_yields_two_concurrent_claims_over_http(owner, author, worker):
    for index in range(2):
        _build(author, ProjectFactory(owner=owner, starter=True), f"slot-{index}")
    _, session, _ = worker.register({LATEX: 1})
    results = []
    start = threading.Barrier(3)

    def acquire():
        start.wait()
        offers = {"offers": [{"operation": LATEX, "permits": 1}], "wait_seconds": 1}
        results.append(worker.post(f"sessions/{session['session_id']}/acquire", offers)[1]["claim"])

    threads = [threading.Thread(target=acquire) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len([claim for claim in results if claim]) == 1


def test_cancellation_while_running_reaches_the_worker_by_heartbeat(owner, author, worker):
    project = ProjectFactory(owner=owner, starter=True)
    job = _build(author, project, "to-cancel")
    _, session, _ = worker.register({LATEX: 1})
    offers = {"offers": [{"operation": LATEX, "permits": 1}], "wait_seconds": 5}
    claim = worker.post(f"sessions/{session['session_id']}/acquire", offers)[1]["claim"]
    assert (
        worker.post(f"claims/{claim['claim_id']}/heartbeat", {"phase": "processing"})[1]["cancellation_requested"]
        is False
    )

    _, cancelled, _ = author.json("POST", f"/v1/processing/jobs/{job['id']}/cancel")
    assert cancelled["state"] == "running" and cancelled["cancellation_requested"] is True

    status, lease, _ = worker.post(f"claims/{claim['claim_id']}/heartbeat", {"phase": "processing"})
    assert status == 200 and lease["cancellation_requested"] is True
    _, outcome, _ = worker.post(
        f"claims/{claim['claim_id']}/failure",
        {"failure_class": "worker_interrupted", "code": "cancelled", "message": "Stopped on request."},
    )
    assert outcome["job_state"] == "cancelled"
    assert ProcessingJob.objects.get(pk=job["id"]).artifacts.count() == 0


def test_delivery_after_a_cancellation_request_publishes_nothing(owner, author, worker):
    job = _build(author, ProjectFactory(owner=owner, starter=True), "cancel-then-deliver")
    _, session, _ = worker.register({LATEX: 1})
    offers = {"offers": [{"operation": LATEX, "permits": 1}], "wait_seconds": 5}
    claim = worker.post(f"sessions/{session['session_id']}/acquire", offers)[1]["claim"]
    pdf = pdf_bytes()
    _put(worker, _upload(worker, claim, "pdf", "application/pdf", "main.pdf", pdf)[1], pdf)
    author.json("POST", f"/v1/processing/jobs/{job['id']}/cancel")

    status, body, _ = worker.post(f"claims/{claim['claim_id']}/delivery", {})

    assert (status, body["error"]["code"]) == (409, "job_cancelled")
    stored = ProcessingJob.objects.get(pk=job["id"])
    assert stored.state == JobState.CANCELLED and stored.artifacts.count() == 0


def test_the_agents_client_uploads_on_the_claims_ticket_and_falls_back_when_it_expired(owner, author, protocol_server):
    from datetime import timedelta

    from django.utils import timezone

    from processing.models import StagedOutput, TransferTicket
    from quire_worker.client import HttpCoreClient
    from tests.processing.factories import WORKER_TOKEN

    client = HttpCoreClient(protocol_server.url, WORKER_TOKEN)
    session = client.register(instance="e2e", processors=[{"operation": LATEX, "processor_contract": "c", "slots": 2}])
    for index in range(2):
        _build(author, ProjectFactory(owner=owner, starter=True), f"tickets-{index}")
    fresh, stale = client.acquire(session_id=session["session_id"], offers={LATEX: 2}, wait_seconds=5, max_claims=2)
    TransferTicket.objects.filter(pk=stale["uploads"]["pdf"]["ticket_id"]).update(
        expires_at=timezone.now() - timedelta(hours=1)
    )
    pdf = pdf_bytes(1)

    for claim in (fresh, stale):
        staged = client.upload_output(
            claim_id=claim["claim_id"],
            role="pdf",
            media_type="application/pdf",
            filename="main.pdf",
            data=pdf,
            ticket=claim["uploads"]["pdf"],
        )
        assert staged["sha256"] == hashlib.sha256(pdf).hexdigest()

    def upload_tickets(claim):
        return TransferTicket.objects.filter(kind="upload_output", role="pdf", attempt__claim_id=claim["claim_id"])

    assert upload_tickets(fresh).count() == 1, "the claim's own ticket sufficed"
    assert upload_tickets(stale).count() == 2, "an expired one was replaced by a requested ticket"
    assert StagedOutput.objects.filter(role="pdf", filename="main.pdf").count() == 2
