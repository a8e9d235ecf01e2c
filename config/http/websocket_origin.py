"""WebSockets are not covered by CSRF protection, and browsers send a page's cookies with a socket it opens
to any site: a socket is accepted only from the site's own origin (the Origin header names the host the
socket is opened on) or one listed in ``CSRF_TRUSTED_ORIGINS``. Anything else is refused at the handshake."""

from urllib.parse import urlsplit

from django.conf import settings


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def origin_allowed(scope) -> bool:
    origin, host = _header(scope, b"origin"), _header(scope, b"host")
    if not origin or not host:
        return False
    if origin in getattr(settings, "CSRF_TRUSTED_ORIGINS", []):
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.lower()


class SameOriginWebSockets:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            await send({"type": "websocket.close"})  # before the handshake completes: a plain 403
            return
        await self.app(scope, receive, send)
