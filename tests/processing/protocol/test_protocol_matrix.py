"""Replay, conflict and authorization for every worker route (in-process client, real database)."""

import hashlib
import json
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from processing.models import ProcessingAttempt, StagedOutput, WorkerRequest, WorkerSession
from processing.submission.submit import job_submit
from tests.factories import ProjectFactory
from tests.processing.factories import WORKER_TOKEN, WORKER_TOKEN_SHA256
from tests.processing.worker_calls import ECHO, PREFIX, post, put_bytes, stage_echo_output, worker_client

OTHER_TOKEN = "another-identitys-token"


@pytest.fixture(autouse=True)
def two_identities(settings, tmp_path):
    path = tmp_path / "two.toml"
    path.write_text(
        f'[[workers]]\nname = "pool"\ntoken_sha256 = "{WORKER_TOKEN_SHA256}"\noperations = ["{ECHO}"]\n'
        f'[[workers]]\nname = "other"\ntoken_sha256 = "{hashlib.sha256(OTHER_TOKEN.encode()).hexdigest()}"\n'
        f'operations = ["{ECHO}"]\n'
    )
    settings.QUIRE_DEPLOYMENT_FILE = str(path)


def register(client=None):
    processors = [{"operation": ECHO, "processor_contract": "echo/1", "slots": 2}]
    response = post("sessions", {"instance": "t", "protocol_version": "1", "processors": processors}, client=client)
    assert response.status_code == 201, response.content
    return response.json()["session_id"]


@pytest.fixture
def claimed(owner):
    """A session, and a claim on an echo job (with its download ticket)."""
    project = ProjectFactory(owner=owner, starter=True)
    job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key="k", project_id=project.pk)
    session_id = register()
    response = post(
        f"sessions/{session_id}/acquire", {"offers": [{"operation": ECHO, "permits": 1}], "wait_seconds": 0}
    )
    return session_id, response.json()["claim"]


def routes(session_id: str, claim_id: str) -> dict[str, tuple[str, dict, dict]]:
    """route name → (path, payload, a different payload)."""
    upload = {"role": "echo", "media_type": "application/octet-stream", "filename": "e", "size": 1, "sha256": "a" * 64}
    return {
        "register": (
            "sessions",
            {
                "instance": "t",
                "protocol_version": "1",
                "processors": [{"operation": ECHO, "processor_contract": "c", "slots": 1}],
            },
            {
                "instance": "u",
                "protocol_version": "1",
                "processors": [{"operation": ECHO, "processor_contract": "c", "slots": 1}],
            },
        ),
        "session_heartbeat": (f"sessions/{session_id}/heartbeat", {"health": {ECHO: True}}, {"health": {ECHO: False}}),
        "acquire": (
            f"sessions/{session_id}/acquire",
            {"offers": [{"operation": ECHO, "permits": 1}], "wait_seconds": 0},
            {"offers": [{"operation": ECHO, "permits": 2}], "wait_seconds": 0},
        ),
        "claim_heartbeat": (f"claims/{claim_id}/heartbeat", {"phase": "processing"}, {"phase": "uploading_result"}),
        "upload_ticket": (f"claims/{claim_id}/uploads", upload, {**upload, "size": 2}),
        "failure": (
            f"claims/{claim_id}/failure",
            {"failure_class": "processor_rejected", "code": "x", "message": "m"},
            {"failure_class": "resource_limit", "code": "x", "message": "m"},
        ),
        "release": (f"claims/{claim_id}/release", {}, {"extra": 1}),
        "delivery": (f"claims/{claim_id}/delivery", {}, {"diagnostics": {"log": "x"}}),
        "drain": (f"sessions/{session_id}/drain", {}, {"extra": 1}),
        "cancellations": (
            f"sessions/{session_id}/cancellations",
            {"wait_seconds": 0},
            {"wait_seconds": 0, "known_claim_ids": [claim_id]},
        ),
    }


ROUTES = ["register", "session_heartbeat", "acquire", "claim_heartbeat", "upload_ticket", "failure", "release",
          "delivery", "drain"]  # fmt: skip
# Routes that change nothing: not replayed (a retry asks again), but refused as the others are.
READ_ONLY_ROUTES = ["cancellations"]


@pytest.mark.django_db
@pytest.mark.parametrize("route", ROUTES)
def test_a_retry_returns_the_stored_response_byte_for_byte(claimed, route):
    session_id, claim = claimed
    path, payload, _ = routes(session_id, claim["claim_id"])[route]
    first = post(path, payload, request_id="replayed-request")
    again = post(path, payload, request_id="replayed-request")
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert WorkerRequest.objects.filter(request_id="replayed-request").count() == 1


@pytest.mark.django_db
def test_a_retried_registration_makes_one_session():
    client = worker_client()
    processors = [{"operation": ECHO, "processor_contract": "c", "slots": 1}]
    for _ in range(3):
        post(
            "sessions",
            {"instance": "t", "protocol_version": "1", "processors": processors},
            "register-once",
            client=client,
        )
    assert WorkerSession.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("route", ROUTES)
def test_the_same_request_id_with_another_payload_is_409(claimed, route):
    session_id, claim = claimed
    path, payload, changed = routes(session_id, claim["claim_id"])[route]
    post(path, payload, request_id="conflicting-id")
    response = post(path, changed, request_id="conflicting-id")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "request_id_reused"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("route", ROUTES)
def test_a_request_still_in_flight_is_409_request_in_progress(claimed, route):
    session_id, claim = claimed
    path, payload, _ = routes(session_id, claim["claim_id"])[route]
    now = timezone.now()
    # Its row, held without a response yet, committed (the test runs outside a transaction).
    WorkerRequest.objects.create(
        identity="pool",
        request_id="in-flight-id",
        route="in-flight",
        payload_sha256="",
        created_at=now,
        expires_at=now + timedelta(seconds=60),
    )
    response = post(path, payload, request_id="in-flight-id")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "request_in_progress"


@pytest.mark.django_db
@pytest.mark.parametrize("route", ROUTES + READ_ONLY_ROUTES)
@pytest.mark.parametrize("token", [None, "wrong-token"])
def test_every_route_needs_a_worker_token(claimed, route, token):
    session_id, claim = claimed
    path, payload, _ = routes(session_id, claim["claim_id"])[route]
    client = APIClient()
    if token:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    stored = WorkerRequest.objects.count()
    response = post(path, payload, client=client)
    assert response.status_code == 401
    assert WorkerRequest.objects.count() == stored


@pytest.mark.django_db
def test_worker_routes_answer_json_whatever_the_accept_header_asks(claimed):
    session_id, claim = claimed
    client = worker_client()

    answered = client.post(
        f"{PREFIX}/claims/{claim['claim_id']}/heartbeat",
        {"request_id": "beat-0001"},
        format="json",
        HTTP_ACCEPT="text/html",
    )
    refused = client.post(f"{PREFIX}/sessions/{session_id}/drain", {}, format="json", HTTP_ACCEPT="text/html")

    assert (answered.status_code, answered["Content-Type"]) == (200, "application/json")
    assert "lease_expires_at" in answered.json()
    assert (refused.status_code, refused.json()["error"]["code"]) == (422, "protocol_invalid")


@pytest.mark.django_db
@pytest.mark.parametrize("route", [r for r in ROUTES + READ_ONLY_ROUTES if r != "register"])
def test_another_identity_cannot_touch_my_session_or_claim(claimed, route):
    session_id, claim = claimed
    path, payload, _ = routes(session_id, claim["claim_id"])[route]
    response = post(path, payload, client=worker_client(OTHER_TOKEN))
    assert response.status_code in (404, 409)
    assert response.json()["error"]["code"] in ("session_not_found", "claim_lost")


@pytest.mark.django_db
@pytest.mark.parametrize("route", READ_ONLY_ROUTES)
def test_a_read_only_route_is_not_replayed_and_needs_no_request_id(claimed, route):
    session_id, claim = claimed
    path, payload, _ = routes(session_id, claim["claim_id"])[route]
    stored = WorkerRequest.objects.count()

    body = json.dumps(payload)  # no request_id
    without_id = worker_client().generic("POST", f"{PREFIX}/{path}", body, content_type="application/json")
    first, again = post(path, payload, request_id="read-only-id"), post(path, payload, request_id="read-only-id")

    assert (without_id.status_code, first.status_code, again.status_code) == (200, 200, 200)
    assert WorkerRequest.objects.count() == stored


@pytest.mark.django_db
def test_a_poll_for_an_unknown_session_is_404(claimed):
    response = post("sessions/00000000-0000-4000-8000-000000000000/cancellations", {"wait_seconds": 0})

    assert (response.status_code, response.json()["error"]["code"]) == (404, "session_not_found")


@pytest.mark.django_db
def test_another_identity_learns_nothing_from_a_claim_delivered_already(claimed):
    """A claim's own identity retrying a delivered claim is told the job's state; anyone else is told nothing."""
    _, claim = claimed
    stage_echo_output(claim)
    assert post(f"claims/{claim['claim_id']}/delivery", {}).status_code == 200

    response = post(f"claims/{claim['claim_id']}/delivery", {}, client=worker_client(OTHER_TOKEN))

    assert (response.status_code, response.json()["error"]["code"]) == (409, "claim_lost")
    assert "job_state" not in response.json()


@pytest.mark.django_db
@pytest.mark.parametrize("token_kind", ["user", "worker"])
def test_user_tokens_and_worker_tokens_do_not_cross(owner, token_kind, api_client_for):
    from tests.factories import bearer_token_for

    if token_kind == "user":
        response = post(
            "sessions",
            {"instance": "t", "protocol_version": "1", "processors": []},
            client=worker_client(bearer_token_for(owner)),
        )
    else:
        response = worker_client().get("/v1/projects")
    assert response.status_code == 401


@pytest.mark.django_db
def test_registering_a_processor_outside_the_identitys_scope_is_422():
    processors = [{"operation": "latex.compile.pdf/v1", "processor_contract": "c", "slots": 1}]
    response = post("sessions", {"instance": "t", "protocol_version": "1", "processors": processors})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "processor_out_of_scope"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("version", "operation", "slots"),
    [("2", ECHO, 1), ("1", None, 1), ("1", ECHO, 0), ("1", "nope/v1", 1)],
)
def test_invalid_registrations_are_422(version, operation, slots):
    processors = [{"operation": operation, "processor_contract": "c", "slots": slots}] if operation else []
    payload = {"instance": "t", "protocol_version": version, "processors": processors}
    response = post("sessions", payload)
    assert response.status_code == 422
    assert WorkerSession.objects.count() == 0


@pytest.mark.django_db
@pytest.mark.parametrize("request_id", ["short", "x" * 65, "has space here", None])
def test_a_bad_request_id_is_refused(request_id):
    body = {
        "instance": "t",
        "protocol_version": "1",
        "processors": [{"operation": ECHO, "processor_contract": "c", "slots": 1}],
    }
    if request_id is not None:
        body["request_id"] = request_id
    response = worker_client().generic("POST", f"{PREFIX}/sessions", json.dumps(body), content_type="application/json")
    assert response.status_code == 422
    assert WorkerSession.objects.count() == 0


@pytest.mark.django_db
def test_transfer_tickets_need_their_secret(claimed):
    _, claim = claimed
    download = claim["input"]["download"]
    wrong = worker_client().get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET="guess")
    missing = worker_client().get(download["url"])
    right = worker_client().get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET=download["secret"])
    assert (wrong.status_code, missing.status_code, right.status_code) == (403, 403, 200)
    assert hashlib.sha256(right.content).hexdigest() == claim["input"]["sha256"]


@pytest.mark.django_db
def test_another_identity_knowing_a_tickets_secret_can_neither_download_nor_upload(claimed):
    _, claim = claimed
    download, upload = claim["input"]["download"], claim["uploads"]["echo"]
    other = worker_client(OTHER_TOKEN)
    output = b"another identity's output"
    declared = {"media_type": "application/octet-stream", "sha256": hashlib.sha256(output).hexdigest()}

    taken = other.get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET=download["secret"])
    planted = put_bytes(upload, output, client=other, **declared)

    assert (taken.status_code, planted.status_code) == (403, 403)
    assert (taken.json()["error"]["code"], planted.json()["error"]["code"]) == ("ticket_invalid", "ticket_invalid")
    assert not StagedOutput.objects.exists()
    holder = worker_client().get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET=download["secret"])
    assert holder.status_code == 200
    assert put_bytes(upload, output, **declared).status_code == 200


@pytest.mark.django_db
def test_an_upload_ticket_cannot_download_and_a_download_ticket_cannot_upload(claimed):
    _, claim = claimed
    download = claim["input"]["download"]
    response = put_bytes(download, b"x")
    assert response.status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize("lapse", ["expired_state", "past_its_expiry"])
def test_acquiring_on_a_session_that_lapsed_says_session_gone(lapse):
    from datetime import timedelta

    session_id = register()
    if lapse == "expired_state":
        WorkerSession.objects.filter(pk=session_id).update(state="expired")
    else:
        WorkerSession.objects.filter(pk=session_id).update(expires_at=timezone.now() - timedelta(hours=1))
    response = post(
        f"sessions/{session_id}/acquire", {"offers": [{"operation": ECHO, "permits": 1}], "wait_seconds": 0}
    )
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "session_gone"


@pytest.mark.django_db
def test_an_expired_ticket_is_refused(claimed):
    from datetime import timedelta

    from django.utils import timezone

    from processing.models import TransferTicket

    _, claim = claimed
    download = claim["input"]["download"]
    TransferTicket.objects.filter(pk=download["ticket_id"]).update(expires_at=timezone.now() - timedelta(hours=1))

    response = worker_client().get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET=download["secret"])
    assert response.status_code == 403
    assert response.json()["error"]["code"] == "ticket_invalid"


@pytest.mark.django_db
def test_bytes_uploaded_after_the_lease_ran_out_stage_nothing(claimed):
    from datetime import timedelta

    from django.utils import timezone

    from processing.models import ProcessingAttempt, StagedOutput

    _, claim = claimed
    claim_id = claim["claim_id"]

    def ticket_for(data: bytes) -> dict:
        upload = {
            "role": "echo",
            "media_type": "application/octet-stream",
            "filename": "e",
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        return post(f"claims/{claim_id}/uploads", upload).json()

    in_time, late = ticket_for(b"in time"), ticket_for(b"too late")
    assert put_bytes(in_time, b"in time").status_code == 200
    ProcessingAttempt.objects.filter(claim_id=claim_id).update(lease_expires_at=timezone.now() - timedelta(hours=1))

    response = put_bytes(late, b"too late")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "claim_lost"
    assert list(StagedOutput.objects.values_list("sha256", flat=True)) == [hashlib.sha256(b"in time").hexdigest()]


@pytest.mark.django_db
def test_one_acquire_hands_out_several_claims_within_the_offer(owner):
    for index in range(3):
        project = ProjectFactory(owner=owner, starter=True)
        job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key=f"k{index}", project_id=project.pk)
    session_id = register()  # two echo slots

    response = post(
        f"sessions/{session_id}/acquire",
        {"offers": [{"operation": ECHO, "permits": 2}], "wait_seconds": 0, "max_claims": 5},
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert len(body["claims"]) == 2, "never more than the permits offered"
    assert body["claim"] == body["claims"][0]
    assert len({claim["job_id"] for claim in body["claims"]}) == 2
    for claim in body["claims"]:
        download = claim["input"]["download"]
        data = worker_client().get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET=download["secret"]).content
        assert hashlib.sha256(data).hexdigest() == claim["input"]["sha256"]


@pytest.mark.django_db
@pytest.mark.parametrize("max_claims", [0, 257, "two"])
def test_an_acquire_asking_for_an_impossible_number_of_claims_is_422(owner, max_claims):
    project = ProjectFactory(owner=owner, starter=True)
    job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key="k", project_id=project.pk)
    session_id = register()

    offers = [{"operation": ECHO, "permits": 1}]
    response = post(f"sessions/{session_id}/acquire", {"offers": offers, "wait_seconds": 0, "max_claims": max_claims})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "protocol_invalid"
    assert not ProcessingAttempt.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("change", "status", "code"),
    [
        ({"role": "pdf"}, 422, "output_rejected"),
        ({"media_type": "text/plain"}, 422, "output_rejected"),
        ({"size": 64 * 1024 * 1024 + 1}, 422, "output_rejected"),
        ({"lease": "expired"}, 409, "claim_lost"),
        ({"token": OTHER_TOKEN}, 409, "claim_lost"),
        ({"token": OTHER_TOKEN, "role": "nope"}, 409, "claim_lost"),  # whose claim it is comes first
    ],
    ids=[
        "undeclared-role",
        "wrong-media-type",
        "over-the-role-limit",
        "lease-expired",
        "another-identity",
        "another-identity-undeclared-role",
    ],
)
def test_a_refused_upload_ticket_says_why_and_issues_nothing(claimed, change, status, code):
    from datetime import timedelta

    from processing.models import TransferTicket

    _, claim = claimed
    change = dict(change)  # the parameter is shared by every repetition of the test
    if change.pop("lease", None):
        ProcessingAttempt.objects.filter(claim_id=claim["claim_id"]).update(
            lease_expires_at=timezone.now() - timedelta(hours=1)
        )
    upload = {
        "role": "echo",
        "media_type": "application/octet-stream",
        "filename": "e",
        "size": 1,
        "sha256": "a" * 64,
        **change,
    }
    token = upload.pop("token", WORKER_TOKEN)
    tickets_before = TransferTicket.objects.count()

    response = post(f"claims/{claim['claim_id']}/uploads", upload, client=worker_client(token))

    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert TransferTicket.objects.count() == tickets_before


@pytest.mark.django_db
def test_an_upload_ticket_carries_the_roles_limit(claimed):
    _, claim = claimed
    upload = {"role": "echo", "media_type": "application/octet-stream", "filename": "e", "size": 3, "sha256": "a" * 64}

    response = post(f"claims/{claim['claim_id']}/uploads", upload)

    assert response.status_code == 201
    assert response.json()["max_bytes"] == 64 * 1024 * 1024


@pytest.mark.django_db
def test_an_acquire_may_ask_for_as_many_claims_as_a_session_may_have_slots(owner):
    project = ProjectFactory(owner=owner, starter=True)
    job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key="k", project_id=project.pk)
    session_id = register()

    response = post(
        f"sessions/{session_id}/acquire",
        {"offers": [{"operation": ECHO, "permits": 2}], "wait_seconds": 0, "max_claims": 256},
    )

    assert response.status_code == 200, response.content
    assert len(response.json()["claims"]) == 1


@pytest.mark.django_db
def test_an_input_download_under_a_lost_claim_gives_no_bytes(claimed):
    from datetime import timedelta

    _, claim = claimed
    download = claim["input"]["download"]
    ProcessingAttempt.objects.filter(claim_id=claim["claim_id"]).update(
        lease_expires_at=timezone.now() - timedelta(hours=1)
    )

    right = worker_client().get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET=download["secret"])
    wrong = worker_client().get(download["url"], HTTP_X_QUIRE_TRANSFER_SECRET="guess")

    assert (right.status_code, right.json()["error"]["code"]) == (409, "claim_lost")
    assert (wrong.status_code, wrong.json()["error"]["code"]) == (403, "ticket_invalid")
