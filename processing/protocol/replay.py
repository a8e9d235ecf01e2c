"""Worker request replay: a retried ``request_id`` gets the stored response back, byte for byte.

A session-level advisory lock on (identity, request_id) is held while the
request runs, so a duplicate arriving meanwhile gets ``409 request_in_progress``
without waiting. One round trip takes the lock and looks up a stored response,
another stores the response and releases the lock (the functions of processing/protocol/sql/replay.sql).
The response is stored after the handler's own transaction commits, and after
it is sent: a client that has its answer does not retry, and one whose answer
was lost on the way retries and meets the lock (409, which the agent retries)
or the stored response. If the process dies before the store, the retry runs
the handler again, and every handler is written to give the same answer for an
effect already made. Responses of 5xx are not stored: the retry should try again.
"""

import hashlib
import json
import logging
import re
from collections.abc import Callable

from django.http import HttpResponse

from config.errors import QuireError
from config.http.asgi_handler import close_after_sending
from config.http.errors import error_body
from config.prepared import prepared_cursor
from processing.advisory import advisory_key
from processing.exceptions import ProtocolInvalid, RequestIdReused, RequestInProgress

logger = logging.getLogger(__name__)

REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{8,64}$")
KEEP_SECONDS = 6 * 3600


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
    """Run ``handler`` once per (identity, request_id); return its stored response on a retry.

    The response is stored and the lock released when the response is closed, which the ASGI handler does
    after sending it (``close_after_sending``): the client is not kept waiting for the store.
    """
    payload = json.loads(raw_payload or b"{}")
    request_id = request_id_of(payload)
    digest = hashlib.sha256(route.encode() + b"\0" + raw_payload).hexdigest()
    lock = advisory_key("worker-request", f"{identity}:{request_id}")
    with prepared_cursor() as cursor:
        locked, stored_digest, stored_status, stored_body = cursor.execute(
            "SELECT * FROM processing_replay_begin(%s, %s, %s)", [lock, identity, request_id]
        ).fetchone()
    if not locked:
        raise RequestInProgress()
    try:
        if stored_digest is not None:
            if stored_digest != digest:
                raise RequestIdReused()
            response, to_store = _json_response(stored_status, bytes(stored_body)), None
        else:
            response, to_store = _answered(route, digest, handler)
    except BaseException:
        _end(lock, identity, request_id, None)
        raise
    response._resource_closers.append(lambda: _end_logged(lock, identity, request_id, to_store))
    return close_after_sending(response)


def _answered(route: str, digest: str, handler) -> tuple[HttpResponse, tuple[str, str, int, bytes] | None]:
    """The handler's response, and the record to store for its retries (none for a 5xx: a retry tries again)."""
    try:
        status, body = handler()
        encoded = _encode(body)
    except QuireError as exc:
        status, encoded = exc.status_code, _encode(error_body(exc.code, exc.message, exc.details))
    return _json_response(status, encoded), ((route, digest, status, encoded) if status < 500 else None)


def _end_logged(lock: int, identity: str, request_id: str, to_store) -> None:
    """``_end`` as a response closer: Django's ``close`` swallows a closer's exception, so it is logged here."""
    try:
        _end(lock, identity, request_id, to_store)
    except Exception:
        logger.exception("storing the response of worker request %s of %s failed", request_id, identity)


def _end(lock: int, identity: str, request_id: str, to_store: tuple[str, str, int, bytes] | None) -> None:
    """Store the response (if any) and release the lock in one round trip; never leave the lock held."""
    route, digest, status, body = to_store or ("", "", 0, b"")
    try:
        with prepared_cursor() as cursor:
            cursor.execute(
                "SELECT processing_replay_end(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [lock, to_store is not None, identity, request_id, route, digest, status, body, KEEP_SECONDS],
            )
    except Exception:
        # The store failed before the function released the lock; a pooled connection must not keep it.
        with prepared_cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [lock])
        raise
