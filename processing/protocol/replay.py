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

from django.http import HttpResponse
from django.utils import timezone

from config.errors import QuireError
from config.http.errors import error_body
from config.prepared import prepared_cursor
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
    with prepared_cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [lock])
        if not cursor.fetchone()[0]:
            raise RequestInProgress()
    try:
        stored = _stored(identity, request_id)
        if stored is not None:
            stored_digest, stored_status, stored_body = stored
            if stored_digest != digest:
                raise RequestIdReused()
            return _json_response(stored_status, bytes(stored_body))
        try:
            status, body = handler()
            encoded = _encode(body)
        except QuireError as exc:
            status, encoded = exc.status_code, _encode(error_body(exc.code, exc.message, exc.details))
        if status < 500:
            _store(identity, request_id, route, digest, status, encoded)
        return _json_response(status, encoded)
    finally:
        with prepared_cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [lock])


# Every mutating worker request (a pickup included) looks up and stores its response here: plain
# statements spare the ORM its query building on that path.
_TABLE = WorkerRequest._meta.db_table


def _stored(identity: str, request_id: str) -> tuple[str, int, bytes] | None:
    with prepared_cursor() as cursor:
        cursor.execute(
            f"SELECT payload_sha256, response_status, response_body FROM {_TABLE}"  # noqa: S608  the model's table
            " WHERE identity = %s AND request_id = %s",
            [identity, request_id],
        )
        return cursor.fetchone()


def _store(identity: str, request_id: str, route: str, digest: str, status: int, body: bytes) -> None:
    now = timezone.now()
    with prepared_cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_TABLE} (identity, request_id, route, payload_sha256, response_status, response_body,"  # noqa: S608
            " created_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            [identity, request_id, route, digest, status, body, now, now + KEEP_RESPONSES],
        )
