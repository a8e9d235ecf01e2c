"""WebSockets are not covered by CSRF protection, and browsers send a page's cookies with a socket it opens
to any site: a socket is accepted only from the site's own origin (the Origin header names, over http or
https, the host the socket is opened on) or one listed in ``CSRF_TRUSTED_ORIGINS``. Anything else is refused
at the handshake.

Channels' ``OriginValidator`` compares an origin with each allowed one (scheme, host and port, a default port
filled in). Two of its parts are not used. Its list is fixed when it is built, but the site's own origin is
known only from each socket's ``Host``, so each handshake is checked against the trusted origins plus that
host's. And its refusal is ``WebsocketDenier``, a consumer on the default channel layer: on the PostgreSQL
layer a consumer's first receive takes a session advisory lock on a pooled connection, never released, so a
stream of refused handshakes would fill PostgreSQL's lock table. The refusal here touches no layer.
"""

from urllib.parse import urlparse

from channels.security.websocket import OriginValidator
from django.conf import settings


class SameOriginWebSockets(OriginValidator):
    def __init__(self, application):
        super().__init__(application, settings.CSRF_TRUSTED_ORIGINS)

    async def __call__(self, scope, receive, send):
        if not self.origin_allowed(scope):
            await send({"type": "websocket.close"})  # before the handshake completes: a plain 403
            return
        await self.application(scope, receive, send)

    def origin_allowed(self, scope) -> bool:
        headers = dict(scope.get("headers", []))
        origin, host = headers.get(b"origin"), headers.get(b"host")
        if origin is None:
            return False
        own = [f"{scheme}://{host.decode('latin-1')}" for scheme in ("http", "https")] if host else []
        parsed = urlparse(origin.decode("latin-1"))
        try:
            return any(self.match_allowed_origin(parsed, allowed) for allowed in [*self.allowed_origins, *own])
        except ValueError:  # a port that is not a number, in the Origin or the Host
            return False
