"""The server's start and stop (ASGI lifespan), mapped beside HTTP and WebSockets in ``config/asgi.py``.

At start the live editing hub learns the server's event loop (requests that store document updates
hand them to it) and joins the channel layer; at a graceful stop it projects every document still open.
"""

import logging

from collaboration import facade as collaboration

logger = logging.getLogger(__name__)


async def live_editing_lifespan(scope, receive, send):
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
