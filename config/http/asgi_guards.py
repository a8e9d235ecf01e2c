"""Guards that must run before Django reads a request body or decodes its path.

Django's ASGI handler reads (and spools to disk) the whole body before any
middleware or view runs, so a request declaring a body larger than its endpoint
accepts (config/http/body_limits.py, under the deployment's cap) is refused here
with 413, without reading it; a body that grows past the limit while streaming
is cut off the same way, one chunk past it. A percent-encoded path that is not
UTF-8 would otherwise reach Django with replacement characters in it.
"""

import json
from urllib.parse import unquote_to_bytes

from django.conf import settings

from config.errors import PayloadTooLarge
from config.http.body_limits import UNDECLARED_BODY_BYTES, body_limit_for


def _error(status: int, code: str, message: str, details: dict | None = None) -> tuple[int, bytes]:
    return status, json.dumps({"error": {"code": code, "message": message, "details": details or {}}}).encode()


def _refusal(scope) -> tuple[int, PayloadTooLarge]:
    """The body limit of the request's endpoint, and the 413 it answers over it."""
    cap = settings.QUIRE_MAX_REQUEST_BYTES
    declared = body_limit_for(scope["path"][len(scope.get("root_path", "")) :])
    if declared.limit_bytes() < cap:
        return declared.limit_bytes(), declared.refusal()
    return cap, PayloadTooLarge(f"Bodies are limited to {cap} bytes.", details={"limit_bytes": cap})


def _answer(refusal: PayloadTooLarge, **details) -> tuple[int, bytes]:
    return _error(refusal.status_code, refusal.code, refusal.message, {**refusal.details, **details})


async def _respond(send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _declared_length(scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _path_is_utf8(scope) -> bool:
    try:
        unquote_to_bytes(scope.get("raw_path") or scope.get("path", "").encode()).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class RequestGuards:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if not _path_is_utf8(scope):
            return await _respond(send, *_error(400, "invalid_path", "The URL path is not valid UTF-8."))
        declared = _declared_length(scope)
        if declared is not None and declared <= min(UNDECLARED_BODY_BYTES, settings.QUIRE_MAX_REQUEST_BYTES):
            return await self.app(scope, receive, send)  # small enough to read: the view checks its own limit
        limit, too_large = _refusal(scope)
        if declared is not None and declared > limit:
            return await _respond(send, *_answer(too_large, size_bytes=declared))
        return await self.app(scope, *self._bounded(receive, send, limit, too_large))

    @staticmethod
    def _bounded(receive, send, limit: int, too_large: PayloadTooLarge):
        """Cut a streamed body off past ``limit``: answer 413 here and drop whatever the app answers after."""
        received = 0
        refused = False

        async def bounded_receive():
            nonlocal received, refused
            message = await receive()
            if message["type"] == "http.request" and not refused:
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    await _respond(send, *_answer(too_large))
                    return {"type": "http.disconnect"}  # Django abandons the request; nothing is stored
            return message

        async def guarded_send(message):
            if not refused:
                await send(message)

        return bounded_receive, guarded_send
