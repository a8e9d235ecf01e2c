"""The ASGI application's first fork: HTTP, WebSockets, and the server's start and stop (lifespan).

At start the live editing hub learns the server's event loop (requests that store document updates
hand them to it) and joins the channel layer; at a graceful stop it projects every document still open.
"""

import logging

from collaboration import facade as collaboration

logger = logging.getLogger(__name__)


class ProtocolRouter:
    def __init__(self, *, http, websocket):
        self.http, self.websocket = http, websocket

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            return await self.http(scope, receive, send)
        if scope["type"] == "websocket":
            return await self.websocket(scope, receive, send)
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        raise ValueError(f"No handler for ASGI scope type {scope['type']!r}.")

    async def _lifespan(self, receive, send):
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await collaboration.live_server_start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                try:
                    await collaboration.live_server_stop()
                except Exception:
                    logger.exception("stopping live editing failed")
                await send({"type": "lifespan.shutdown.complete"})
                return
