"""The worker protocol's HTTP edge (``/internal/processing/v1/``); see docs/worker-protocol.md."""

import time
import uuid
from urllib.parse import unquote

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

import quire_wire
from foundation.http.bodies import raw_body
from foundation.http.body_limits import body_limit
from foundation.http.openapi import error
from foundation.http.parsers import RawBodyParser, loads_strict
from processing.exceptions import ClaimLost, OffersInvalid, ProtocolInvalid, WarmStartNotFound
from processing.finalization.finalize import job_finalize
from processing.kernel.blobs import blob_read
from processing.kernel.configuration import limits
from processing.kernel.transfers import IssuedTicket
from processing.operations import operation_get
from processing.protocol import serializers as s
from processing.protocol import tickets
from processing.protocol.authentication import WorkerTokenAuthentication
from processing.protocol.replay import replay_run
from processing.protocol.sessions import (
    ClaimHolder,
    claim_holder,
    session_drain,
    session_heartbeat,
    session_register,
    session_slots,
    session_takes_claims,
)
from processing.queue.cancellation import cancellations_awaited
from processing.queue.claims import Claim, claims_acquire
from processing.queue.delivery import AlreadyDelivered, Diagnostics, attempt_fail, attempt_release, delivery_accept_held
from processing.queue.wakeups import wakeups
from processing.submission.warm_start import warm_start_offered

PREFIX = quire_wire.PROTOCOL_PREFIX
SECRET_HEADER = quire_wire.TRANSFER_SECRET_HEADER
PROTOCOL_ERRORS = {
    401: error("Missing or unknown worker token."),
    409: error("`claim_lost`, `session_gone`, `request_in_progress` or `request_id_reused`."),
    422: error("`protocol_invalid`, `processor_out_of_scope` or `output_rejected`."),
}


def _valid(serializer_class, payload: dict) -> dict:
    serializer = serializer_class(data=payload)
    if not serializer.is_valid():
        raise ProtocolInvalid(details=serializer.errors)
    return serializer.validated_data


def _diagnostics(data: dict | None) -> Diagnostics:
    data = data or {}
    return Diagnostics(log=data.get("log", ""), entries=tuple(dict(entry) for entry in data.get("entries", [])))


def _ticket_body(issued: IssuedTicket) -> dict:
    return {
        "ticket_id": str(issued.ticket_id),
        "url": f"{PREFIX}/transfers/{issued.ticket_id}",
        "secret": issued.secret,
        "expires_at": issued.expires_at.isoformat(),
        "max_bytes": issued.max_bytes,
    }


class JsonAnswers(DefaultContentNegotiation):
    """Worker routes answer JSON whatever the Accept header asks: an agent asks for nothing else, and reading
    the header on every request was 2 % of a server's time in a drain."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class WorkerApi(APIView):
    authentication_classes = [WorkerTokenAuthentication]
    permission_classes = [IsAuthenticated]
    parser_classes = [RawBodyParser]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = JsonAnswers

    def identity(self, request):
        return request.user.identity

    def parsed(self, request) -> tuple[bytes, dict]:
        """The request's JSON object, raw and parsed."""
        raw = raw_body(request, limit_bytes=2 * 1024 * 1024, accept=("application/json",))
        payload = loads_strict(raw)
        if not isinstance(payload, dict):
            raise ProtocolInvalid("The body is a JSON object.")
        return raw, payload

    def replayed(self, request, route: str, serializer_class, handler) -> HttpResponse:
        raw, payload = self.parsed(request)
        return replay_run(
            identity=self.identity(request).name,
            route=route,
            raw_payload=raw,
            handler=lambda: handler(_valid(serializer_class, payload)),
            wait_seconds=_long_poll_seconds(serializer_class, payload),
        )

    def claim_of(self, request, claim_id: uuid.UUID) -> ClaimHolder:
        """The job and session of ``claim_id`` when this identity's session holds it; ClaimLost otherwise."""
        holder = claim_holder(claim_id=claim_id, identity=self.identity(request).name)
        if holder is None:
            raise ClaimLost()
        return holder


def _long_poll_seconds(serializer_class, payload: dict) -> float:
    """How long the request may wait by design: a long poll's ``wait_seconds`` (its default when absent, none
    when invalid, which the handler rejects)."""
    field = serializer_class._declared_fields.get("wait_seconds")
    if field is None:
        return 0.0
    wait = payload.get("wait_seconds", field.default)
    if isinstance(wait, bool) or not isinstance(wait, int | float):
        return 0.0
    return min(max(float(wait), 0.0), field.max_value)


class SessionRegisterApi(WorkerApi):
    @extend_schema(request=s.SessionRegisterSerializer, responses={201: s.SessionSerializer, **PROTOCOL_ERRORS})
    def post(self, request):
        def handle(data):
            session = session_register(
                identity=self.identity(request),
                instance=data["instance"],
                protocol_version=data["protocol_version"],
                processors=data["processors"],
            )
            return 201, _session_body(session)

        return self.replayed(request, "sessions", s.SessionRegisterSerializer, handle)


def _session_body(session) -> dict:
    lease = limits().lease_seconds
    return {
        "session_id": str(session.pk),
        "state": session.state,
        "expires_at": session.expires_at.isoformat(),
        "heartbeat_seconds": max(1.0, min(limits().session_ttl_seconds, lease) / 3),
        "lease_seconds": lease,
    }


class SessionHeartbeatApi(WorkerApi):
    @extend_schema(request=s.SessionHeartbeatSerializer, responses={200: s.SessionSerializer, **PROTOCOL_ERRORS})
    def post(self, request, session_id: uuid.UUID):
        def handle(data):
            session = session_heartbeat(identity=self.identity(request), session_id=session_id, health=data["health"])
            return 200, _session_body(session)

        return self.replayed(request, f"sessions/{session_id}/heartbeat", s.SessionHeartbeatSerializer, handle)


class SessionDrainApi(WorkerApi):
    @extend_schema(request=s.RequestOnlySerializer, responses={200: s.SessionSerializer, **PROTOCOL_ERRORS})
    def post(self, request, session_id: uuid.UUID):
        def handle(data):
            return 200, _session_body(session_drain(identity=self.identity(request), session_id=session_id))

        return self.replayed(request, f"sessions/{session_id}/drain", s.RequestOnlySerializer, handle)


def _claim_body(claim: Claim) -> dict:
    limit = limits()
    issued = claim.download
    operation = operation_get(claim.operation)
    return {
        "job_id": str(claim.job_id),
        "attempt": claim.attempt_number,
        "claim_id": str(claim.claim_id),
        "operation": claim.operation,
        "processor_contract": claim.processor_contract,
        "lease_expires_at": claim.lease_expires_at.isoformat(),
        "limits": {
            "wall_seconds": limit.wall_seconds,
            "artifact_bytes": limit.artifact_bytes,
            "diagnostic_bytes": limit.diagnostic_bytes,
            "lease_seconds": limit.lease_seconds,
        },
        "request": {
            "operation": claim.operation,
            "input_schema": operation.input_schema,
            "options": claim.options,
            "input_profile": claim.input_profile,
            "filename": claim.input_filename,
            "attempt": claim.attempt_number,
        },
        "input": {
            "sha256": claim.input_digest,
            "size": claim.input_size,
            "schema": operation.input_schema,
            "download": _ticket_body(issued),
        },
        "uploads": {role: _ticket_body(ticket) for role, ticket in claim.uploads.items()},
        **_warm_start_body(claim, operation),
    }


def _warm_start_body(claim: Claim, operation) -> dict:
    """A LaTeX build's warm start, fetched from ``claims/{id}/warm-start`` and checked against this digest."""
    offered = warm_start_offered(claim.job_id) if operation.warm_starts else None
    if offered is None:
        return {}
    return {"warm_start": {"sha256": offered.sha256, "size": offered.size}}


class AcquireApi(WorkerApi):
    @extend_schema(
        request=s.AcquireSerializer,
        responses={200: s.AcquireResultSerializer, **PROTOCOL_ERRORS},
        description="Offer locally free permits; long-polls up to `wait_seconds`, woken when work is queued.",
    )
    def post(self, request, session_id: uuid.UUID):
        def handle(data):
            offers = _offers_within(session_slots(self.identity(request), session_id), data["offers"])
            claimed = _acquire_waiting(session_id, offers, data["wait_seconds"], data["max_claims"])
            claims = [_claim_body(claim) for claim in claimed]
            return 200, {"claim": claims[0] if claims else None, "claims": claims}

        return self.replayed(request, f"sessions/{session_id}/acquire", s.AcquireSerializer, handle)


def _offers_distinct(offered: list[dict]) -> dict[str, int]:
    offers = {offer["operation"]: offer["permits"] for offer in offered}
    if len(offers) != len(offered):
        raise OffersInvalid(details={"invalid": {}})
    return offers


def _offers_within(registered: dict[str, int], offered: list[dict]) -> dict[str, int]:
    offers = _offers_distinct(offered)
    invalid = {op: n for op, n in offers.items() if op not in registered or n > registered[op]}
    if invalid:
        raise OffersInvalid(details={"invalid": invalid})
    return offers


def _acquire_waiting(session_id: uuid.UUID, offers: dict[str, int], wait_seconds: float, count: int) -> list[Claim]:
    deadline = time.monotonic() + wait_seconds
    while True:
        generation = wakeups.generation()
        claims = claims_acquire(session_id=session_id, offers=offers, count=count)
        remaining = deadline - time.monotonic()
        if claims or remaining <= 0 or not session_takes_claims(session_id):
            return claims
        # A periodic re-check also notices retry backoffs that come due without a notification.
        wakeups.wait(since=generation, timeout=min(remaining, 5.0))


class ClaimHeartbeatApi(WorkerApi):
    @extend_schema(request=s.ClaimHeartbeatSerializer, responses={200: s.LeaseSerializer, **PROTOCOL_ERRORS})
    def post(self, request, claim_id: uuid.UUID):
        from processing.queue.leases import lease_renew

        def handle(data):
            self.claim_of(request, claim_id)
            status = lease_renew(claim_id=claim_id, phase=data.get("phase"))
            return 200, {
                "lease_expires_at": status.lease_expires_at.isoformat(),
                "cancellation_requested": status.cancellation_requested,
            }

        return self.replayed(request, f"claims/{claim_id}/heartbeat", s.ClaimHeartbeatSerializer, handle)


class CancellationsApi(WorkerApi):
    @extend_schema(
        request=s.CancellationsSerializer,
        responses={
            200: s.CancellationsResultSerializer,
            401: PROTOCOL_ERRORS[401],
            404: error("`session_not_found`."),
            409: error("`session_gone`: register again."),
            422: error("`protocol_invalid`."),
        },
        description="The session's running claims whose cancellation was requested. Long-polls up to "
        "`wait_seconds` while there is none beyond `known_claim_ids`, woken the moment one is requested: an agent "
        "keeps one open per session, so a cancel reaches it without waiting for a claim heartbeat. Changes "
        "nothing, so it is not replayed and takes no `request_id`.",
    )
    def post(self, request, session_id: uuid.UUID):
        # Not replayed: the replay lock would pin a database connection for the whole wait.
        data = _valid(s.CancellationsSerializer, self.parsed(request)[1])
        claim_ids = cancellations_awaited(
            identity=self.identity(request),
            session_id=session_id,
            known=set(data["known_claim_ids"]),
            wait_seconds=data["wait_seconds"],
        )
        return Response({"claim_ids": [str(claim_id) for claim_id in claim_ids]})


class UploadTicketApi(WorkerApi):
    @extend_schema(request=s.UploadTicketRequestSerializer, responses={201: s.TicketSerializer, **PROTOCOL_ERRORS})
    def post(self, request, claim_id: uuid.UUID):
        def handle(data):
            issued = tickets.upload_ticket_issue(  # checks whose claim it is in the same statement
                claim_id=claim_id,
                identity=self.identity(request).name,
                role=data["role"],
                media_type=data["media_type"],
                filename=data["filename"],
                size=data["size"],
                sha256=data["sha256"],
            )
            return 201, _ticket_body(issued)

        return self.replayed(request, f"claims/{claim_id}/uploads", s.UploadTicketRequestSerializer, handle)


class ClaimFailureApi(WorkerApi):
    @extend_schema(request=s.FailureReportSerializer, responses={200: s.JobStateSerializer, **PROTOCOL_ERRORS})
    def post(self, request, claim_id: uuid.UUID):
        def handle(data):
            job_id = self.claim_of(request, claim_id).job_id
            state = attempt_fail(
                claim_id=claim_id,
                failure_class=data["failure_class"],
                code=data["code"],
                message=data["message"],
                diagnostics=_diagnostics(data.get("diagnostics")),
            )
            return 200, {"job_id": str(job_id), "job_state": state}

        return self.replayed(request, f"claims/{claim_id}/failure", s.FailureReportSerializer, handle)


class ClaimReleaseApi(WorkerApi):
    @extend_schema(request=s.RequestOnlySerializer, responses={200: s.JobStateSerializer, **PROTOCOL_ERRORS})
    def post(self, request, claim_id: uuid.UUID):
        def handle(data):
            job_id = self.claim_of(request, claim_id).job_id
            return 200, {"job_id": str(job_id), "job_state": attempt_release(claim_id=claim_id)}

        return self.replayed(request, f"claims/{claim_id}/release", s.RequestOnlySerializer, handle)


class DeliveryApi(WorkerApi):
    @extend_schema(
        request=s.DeliverySerializer,
        responses={200: s.DeliveryResultSerializer, **PROTOCOL_ERRORS},
        description="Hand the staged outputs to Core. Core finalizes before answering when it can. With "
        "`offers`, the answer also carries claims for them, made after the delivery frees its slot: a busy "
        "agent refills the slot without an acquire of its own.",
    )
    def post(self, request, claim_id: uuid.UUID):
        def handle(data):
            offered = data.get("offers") or []
            accepted = delivery_accept_held(
                claim_id=claim_id,
                identity=self.identity(request).name,
                offers=_offers_distinct(offered),
                diagnostics=_diagnostics(data.get("diagnostics")),
            )
            if isinstance(accepted, AlreadyDelivered):  # its claims, if any, lapse with their lease
                return 200, {"job_id": str(accepted.job_id), "job_state": accepted.job_state, "claims": []}
            state = job_finalize(job_id=accepted.job_id, token=accepted.token, delivered=accepted.delivered)
            successors = claims_acquire(
                session_id=accepted.delivered.attempt.session_id, offers=accepted.offers, count=data["max_claims"]
            )
            claims = [_claim_body(claim) for claim in successors]
            return 200, {"job_id": str(accepted.job_id), "job_state": state, "claims": claims}

        return self.replayed(request, f"claims/{claim_id}/delivery", s.DeliverySerializer, handle)


SECRET_PARAMETER = OpenApiParameter(SECRET_HEADER, location=OpenApiParameter.HEADER, required=True)
# Needed on a claim's upload ticket (issued with the claim); a requested ticket was declared when issued.
UPLOAD_DECLARATION_PARAMETERS = [
    OpenApiParameter(name, location=OpenApiParameter.HEADER, required=False, description=description)
    for name, description in ((quire_wire.MEDIA_TYPE_HEADER, "The output's media type."),
                              (quire_wire.SHA256_HEADER, "The body's SHA-256, hex."),
                              (quire_wire.FILENAME_HEADER, "The output's filename, percent-encoded UTF-8."))
]  # fmt: skip


class WarmStartApi(WorkerApi):
    @extend_schema(
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, 409: error("`claim_lost`.")},
        description="The claim's warm start (the auxiliary files of the requester's previous build of the "
        "project), when its claim offered one; 404 `warm_start_not_found` when it has none.",
    )
    def get(self, request, claim_id: uuid.UUID):
        holder = self.claim_of(request, claim_id)
        offered = warm_start_offered(holder.job_id)
        if offered is None:
            raise WarmStartNotFound()
        data = blob_read(offered.blob_id)
        return HttpResponse(
            data, content_type="application/octet-stream", headers={quire_wire.SHA256_HEADER: offered.sha256}
        )


@body_limit(lambda: limits().artifact_bytes)
class TransferApi(WorkerApi):
    @extend_schema(
        parameters=[SECRET_PARAMETER],
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, 403: error("`ticket_invalid`.")},
    )
    def get(self, request, ticket_id: uuid.UUID):
        data, digest = tickets.download_redeem(
            ticket_id=ticket_id, secret=request.headers.get(SECRET_HEADER, ""), identity=self.identity(request).name
        )
        return HttpResponse(data, content_type="application/octet-stream", headers={quire_wire.SHA256_HEADER: digest})

    @extend_schema(
        parameters=[SECRET_PARAMETER, *UPLOAD_DECLARATION_PARAMETERS],
        request={"application/octet-stream": OpenApiTypes.BINARY},
        responses={
            200: s.StagedSerializer,
            403: error("`ticket_invalid`."),
            422: error("`output_rejected`."),
        },
        description="Upload the bytes for an upload ticket; the same bytes twice are accepted twice.",
    )
    def put(self, request, ticket_id: uuid.UUID):
        data = raw_body(request, limit_bytes=limits().artifact_bytes, accept=("application/octet-stream",))
        declared = tickets.DeclaredUpload(
            media_type=request.headers.get(quire_wire.MEDIA_TYPE_HEADER, ""),
            filename=unquote(request.headers.get(quire_wire.FILENAME_HEADER, "")),
            sha256=request.headers.get(quire_wire.SHA256_HEADER, ""),
        )
        staged = tickets.upload_redeem(
            ticket_id=ticket_id,
            secret=request.headers.get(SECRET_HEADER, ""),
            identity=self.identity(request).name,
            data=data,
            declared=declared,
        )
        return Response(staged)
