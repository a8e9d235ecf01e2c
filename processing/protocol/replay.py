"""Worker request replay: a retried ``request_id`` gets the stored response back, byte for byte.

A session-level advisory lock on (identity, request_id) is held while the
request runs, so a duplicate arriving meanwhile gets ``409 request_in_progress``
without waiting. The response is stored after the handler's own transaction
commits; if the process dies in between, the retry runs the handler again, and
every handler is written to give the same answer for an effect already made.
Responses of 5xx are not stored: the retry should try again.
"""

import hashlib
import json
import re
from collections.abc import Callable
from datetime import timedelta

from django.db import connection
from django.http import HttpResponse
from django.utils import timezone

from config.errors import QuireError
from config.http.errors import error_body
from processing.admission import advisory_key
from processing.exceptions import ProtocolInvalid, RequestIdReused, RequestInProgress
from processing.models import WorkerRequest

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{8,64}$")
KEEP_RESPONSES = timedelta(hours=6)


def _json_response(status: int, body: bytes) -> HttpResponse:
    return HttpResponse(body, status=status, content_type="application/json")


def _encode(payload: dict) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()


def request_id_of(payload: dict) -> str:
    request_id = payload.get("request_id") if isinstance(payload, dict) else None
    if not isinstance(request_id, str) or not REQUEST_ID.match(request_id):
        raise ProtocolInvalid("Every mutating request carries a request_id of 8–64 characters [A-Za-z0-9._:-].")
    return request_id


def replay_run(
    *, identity: str, route: str, raw_payload: bytes, handler: Callable[[], tuple[int, dict]]
) -> HttpResponse:
    """Run ``handler`` once per (identity, request_id); return its stored response on a retry."""
    payload = json.loads(raw_payload or b"{}")
    request_id = request_id_of(payload)
    digest = hashlib.sha256(route.encode() + b"\0" + raw_payload).hexdigest()
    lock = advisory_key("worker-request", f"{identity}:{request_id}")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [lock])
        if not cursor.fetchone()[0]:
            raise RequestInProgress()
    try:
        stored = WorkerRequest.objects.filter(identity=identity, request_id=request_id).first()
        if stored is not None:
            if stored.payload_sha256 != digest:
                raise RequestIdReused()
            return _json_response(stored.response_status, bytes(stored.response_body))
        try:
            status, body = handler()
            encoded = _encode(body)
        except QuireError as exc:
            status, encoded = exc.status_code, _encode(error_body(exc.code, exc.message, exc.details))
        if status < 500:
            now = timezone.now()
            WorkerRequest.objects.create(
                identity=identity, request_id=request_id, route=route, payload_sha256=digest,
                response_status=status, response_body=encoded, created_at=now, expires_at=now + KEEP_RESPONSES,
            )  # fmt: skip
        return _json_response(status, encoded)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [lock])
