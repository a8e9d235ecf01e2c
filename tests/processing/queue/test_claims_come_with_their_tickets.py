"""A claim comes with an upload ticket per result role; the PUT on it declares media type, digest and filename."""

import hashlib
from datetime import timedelta
from urllib.parse import quote

import pytest
from django.utils import timezone

from processing.models import JobState, ProcessingAttempt, StagedOutput, TransferTicket
from processing.operations import operation_get
from tests.processing.worker_calls import (
    ECHO,
    ONE_ECHO_PERMIT,
    claim_the_next_job,
    post,
    put_bytes,
    queue_echo_jobs,
    session_with_one_echo_slot,
    statements_sent,
    worker_client,
)

pytestmark = pytest.mark.django_db

ECHOED = b"echoed bytes"


@pytest.fixture(autouse=True)
def echo_deployment(configure_deployment):
    configure_deployment(operations=[ECHO])


@pytest.fixture
def claim(owner) -> dict:
    queue_echo_jobs(owner, 1)
    return claim_the_next_job(session_with_one_echo_slot())


def declared_for(data: bytes, **overrides: str) -> dict[str, str]:
    return {
        "media_type": "application/octet-stream",
        "sha256": hashlib.sha256(data).hexdigest(),
        "filename": quote("échø.bin"),
        **overrides,
    }


def test_a_claim_carries_an_upload_ticket_for_each_result_role_of_its_operation(claim):
    [echo_role] = operation_get(ECHO).result_roles

    assert set(claim["uploads"]) == {echo_role.role}
    ticket = claim["uploads"][echo_role.role]
    assert ticket["max_bytes"] == echo_role.max_bytes
    row = TransferTicket.objects.get(pk=ticket["ticket_id"])
    assert (row.kind, row.role, row.attempt.claim_id.hex) == (
        "upload_output",
        "echo",
        claim["claim_id"].replace("-", ""),
    )
    assert row.secret_sha256 == hashlib.sha256(ticket["secret"].encode()).hexdigest()


def test_bytes_put_on_the_claims_ticket_are_staged_and_published_as_declared(claim):
    response = put_bytes(claim["uploads"]["echo"], ECHOED, **declared_for(ECHOED))
    assert response.status_code == 200, response.content

    delivered = post(f"claims/{claim['claim_id']}/delivery", {}).json()

    assert delivered["job_state"] == JobState.SUCCEEDED
    staged = StagedOutput.objects.get()
    assert (staged.role, staged.media_type, staged.filename, staged.size_bytes) == (
        "echo",
        "application/octet-stream",
        "échø.bin",
        len(ECHOED),
    )


@pytest.mark.parametrize(
    "declared",
    [{"sha256": ""}, {"media_type": ""}, {"sha256": "not-a-digest"}, {"sha256": "0" * 64}, {"media_type": "text/html"}],
    ids=["no digest", "no media type", "a malformed digest", "another digest", "a media type the role refuses"],
)
def test_a_put_on_the_claims_ticket_that_declares_badly_is_refused_and_stages_nothing(claim, declared):
    response = put_bytes(claim["uploads"]["echo"], ECHOED, **declared_for(ECHOED, **declared))

    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "output_rejected"
    assert not StagedOutput.objects.exists()


def test_the_claims_upload_ticket_cannot_download(claim):
    ticket = claim["uploads"]["echo"]

    response = worker_client().get(ticket["url"], HTTP_X_QUIRE_TRANSFER_SECRET=ticket["secret"])

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "ticket_invalid"


def test_an_expired_claim_ticket_is_refused(claim):
    ticket = claim["uploads"]["echo"]
    TransferTicket.objects.filter(pk=ticket["ticket_id"]).update(expires_at=timezone.now() - timedelta(hours=1))

    response = put_bytes(ticket, ECHOED, **declared_for(ECHOED))

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "ticket_invalid"
    assert not StagedOutput.objects.exists()


def test_bytes_put_on_a_lost_claims_ticket_stage_nothing(claim):
    ProcessingAttempt.objects.filter(claim_id=claim["claim_id"]).update(
        lease_expires_at=timezone.now() - timedelta(hours=1)
    )

    response = put_bytes(claim["uploads"]["echo"], ECHOED, **declared_for(ECHOED))

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "claim_lost"
    assert not StagedOutput.objects.exists()


def test_a_claim_handed_out_with_a_delivery_carries_its_upload_tickets_too(owner):
    queue_echo_jobs(owner, 2)
    claim = claim_the_next_job(session_with_one_echo_slot())
    assert put_bytes(claim["uploads"]["echo"], ECHOED, **declared_for(ECHOED)).status_code == 200

    [successor] = post(f"claims/{claim['claim_id']}/delivery", {"offers": ONE_ECHO_PERMIT}).json()["claims"]

    assert set(successor["uploads"]) == {"echo"}
    assert put_bytes(successor["uploads"]["echo"], ECHOED, **declared_for(ECHOED)).status_code == 200


def test_a_requested_ticket_keeps_the_declaration_it_was_issued_with_whatever_the_put_says(claim):
    declared = {
        "role": "echo",
        "media_type": "application/octet-stream",
        "filename": "asked.bin",
        "size": len(ECHOED),
        "sha256": hashlib.sha256(ECHOED).hexdigest(),
    }
    ticket = post(f"claims/{claim['claim_id']}/uploads", declared).json()

    response = put_bytes(ticket, ECHOED, media_type="text/html", sha256="0" * 64, filename="other.html")

    assert response.status_code == 200, response.content
    staged = StagedOutput.objects.get()
    assert (staged.media_type, staged.filename) == ("application/octet-stream", "asked.bin")


def test_a_good_put_on_the_claims_ticket_is_checked_and_staged_by_one_statement(claim, monkeypatch):
    with statements_sent(monkeypatch) as sent:
        response = put_bytes(claim["uploads"]["echo"], ECHOED, **declared_for(ECHOED))

    assert response.status_code == 200, response.content
    assert len(sent) == 1, sent
    assert StagedOutput.objects.get().sha256 == hashlib.sha256(ECHOED).hexdigest()


def test_a_good_put_on_a_requested_ticket_is_checked_and_staged_by_one_statement(claim, monkeypatch):
    declared = {
        "role": "echo",
        "media_type": "application/octet-stream",
        "filename": "e.bin",
        "size": len(ECHOED),
        "sha256": hashlib.sha256(ECHOED).hexdigest(),
    }
    ticket = post(f"claims/{claim['claim_id']}/uploads", declared).json()

    with statements_sent(monkeypatch) as sent:
        response = put_bytes(ticket, ECHOED)

    assert response.status_code == 200, response.content
    assert len(sent) == 1, sent
    assert StagedOutput.objects.get().filename == "e.bin"
