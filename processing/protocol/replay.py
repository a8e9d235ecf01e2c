"""Worker request replay: a retried ``request_id`` gets the stored response back, byte for byte.

While the request runs, its row holds no response yet and is held for a few seconds (longer by a long
poll's wait), so a duplicate arriving meanwhile gets ``409 request_in_progress`` without waiting; the row
names this process's listening backend (``wakeups.backend``), so a duplicate arriving once this process is
gone takes the row over at once instead of waiting out the hold. A row rather than a session lock: behind
a transaction pooler no session outlives a transaction. One round trip takes the row (or finds the stored
response), another stores the response (the functions of processing/protocol/sql/replay.sql). The response
is stored after the handler's own transaction commits, and after it is sent: a client that has its answer
does not retry, and one whose answer was lost on the way retries and meets the held row (409, which the
agent retries) or the stored response. If the process dies before the store, a retry runs the handler again
(at once, or after the hold when this process had no listener yet), and every handler is written to give
the same answer for an effect already made. Responses of 5xx are not stored: the row is let go, and the
retry tries again.
"""

import hashlib
import json
import logging
import re
from collections.abc import Callable

from django.db import connection
from django.http import HttpResponse

from foundation.database.prepared import prepared_cursor
from foundation.errors import QuireError
from foundation.http.errors import error_body
from processing.exceptions import ProtocolInvalid, RequestIdReused, RequestInProgress
from processing.queue.wakeups import wakeups

logger = logging.getLogger(__name__)

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{8,64}$")
KEEP_SECONDS = 6 * 3600
# How long a request in progress is held against duplicates, beyond the wait of a long poll: far longer than
# any handler runs, and short, since a request whose process died blocks its retries that long.
HOLD_SECONDS = 5.0


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
    *,
    identity: str,
    route: str,
    raw_payload: bytes,
    handler: Callable[[], tuple[int, dict]],
    wait_seconds: float = 0.0,
) -> HttpResponse:
    """Run ``handler`` once per (identity, request_id); return its stored response on a retry. ``wait_seconds``:
    how long the handler may wait by design (a long poll), which the hold against duplicates adds.

    The response is stored when the response is closed, which the WSGI server does after its last bytes are
    handed over: the client is not kept waiting for the store.
    """
    payload = json.loads(raw_payload or b"{}")
    request_id = request_id_of(payload)
    digest = hashlib.sha256(route.encode() + b"\0" + raw_payload).hexdigest()
    holder_pid, holder_started = wakeups.backend or (None, None)
    with prepared_cursor() as cursor:
        found = cursor.execute(
            "SELECT * FROM processing_replay_begin(%s, %s, %s, %s, %s, %s::integer, %s::timestamptz)",
            [identity, request_id, route, digest, HOLD_SECONDS + wait_seconds, holder_pid, holder_started],
        ).fetchone()
    held, stored_digest, stored_status, stored_body = found or (False, None, None, None)
    if not held:
        if stored_status is None:  # another request with this id is in progress (or just let its row go)
            raise RequestInProgress()
        if stored_digest != digest:
            raise RequestIdReused()
        return _json_response(stored_status, bytes(stored_body))
    try:
        response, to_store = _answered(handler)
    except BaseException:
        _end(identity, request_id, None)
        raise
    response._resource_closers.append(lambda: _end_logged(identity, request_id, to_store))
    return response


def _answered(handler) -> tuple[HttpResponse, tuple[int, bytes] | None]:
    """The handler's response, and the record to store for its retries (none for a 5xx: a retry tries again)."""
    try:
        status, body = handler()
        encoded = _encode(body)
    except QuireError as exc:
        status, encoded = exc.status_code, _encode(error_body(exc.code, exc.message, exc.details))
    return _json_response(status, encoded), ((status, encoded) if status < 500 else None)


def _end_logged(identity: str, request_id: str, to_store) -> None:
    """``_end`` as a response closer: Django's ``close`` swallows a closer's exception, so it is logged here.
    A store that failed leaves the row held: retries get 409 until its hold runs out, then run the handler."""
    try:
        _end(identity, request_id, to_store)
    except Exception:
        logger.exception("storing the response of worker request %s of %s failed", request_id, identity)


def _end(identity: str, request_id: str, to_store: tuple[int, bytes] | None) -> None:
    """Store the response on the held row, or let the row go when there is none to store."""
    status, body = to_store or (0, b"")
    if connection.errors_occurred and connection.connection is not None and not connection.is_usable():
        # The request's connection was lost (the handler answered 503): the row is let go on a fresh one,
        # or the agent's retry would be held off until the hold ran out.
        connection.close()
    with prepared_cursor() as cursor:
        cursor.execute(
            "SELECT processing_replay_end(%s, %s, %s, %s, %s, %s)",
            [to_store is not None, identity, request_id, status, body, KEEP_SECONDS],
        )
