"""The production HTTP worker: gunicorn process management with uvicorn's ASGI server.

Requests are parsed by httptools (C, llhttp), which costs a fraction of h11's
pure-Python parsing: on the worker protocol's drain, h11 was a sixth of a server
process's time. httptools buffers a header block of any size, so the protocol
below stops reading one that grows past ``HEADER_BLOCK_BYTES`` and answers 400,
as h11 did with its incomplete-event limit. The limit sits above Quire's own
header limit, so that most oversized headers reach the middleware and get a 431
in the API's error shape.
"""

import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn_worker import UvicornWorker

from config.http.access_log import PollsAtDebug
from config.http.middleware import MAX_HEADER_BYTES
from foundation.env import env

HEADER_BLOCK_BYTES = 4 * MAX_HEADER_BYTES
# A WebSocket message past this is refused by uvicorn itself (close code 1009); below it, the live editor's
# consumer applies Quire's own limit and says why (collaboration/live/consumer.py).
WEBSOCKET_MESSAGE_BYTES = env("COLLAB_MAX_UPDATE_BYTES") + 1024 * 1024
# The client's address is the connection's, unless it came through a configured proxy: uvicorn would otherwise
# believe X-Forwarded-For from loopback, and anyone there could name any address (sign-in throttling counts them).
TRUSTED_PROXIES = env("QUIRE_TRUSTED_PROXIES")


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._awaiting_headers = True
        self._header_bytes = 0

    def data_received(self, data: bytes) -> None:
        # Bytes read while a header block is incomplete; checked after parsing, so that a chunk which completes
        # the headers (and carries body bytes after them) is never refused. httptools holds at most the limit
        # plus one read's worth of an unfinished block.
        if self._awaiting_headers:
            self._header_bytes += len(data)
        super().data_received(data)
        if self._awaiting_headers and self._header_bytes > HEADER_BLOCK_BYTES and not self.transport.is_closing():
            self.logger.warning("Request header block larger than %d bytes.", HEADER_BLOCK_BYTES)
            self.send_400_response("Request header block too large.")

    def on_headers_complete(self) -> None:
        self._awaiting_headers, self._header_bytes = False, 0
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._awaiting_headers = True
        super().on_message_complete()


class QuireWorker(UvicornWorker):
    CONFIG_KWARGS = {
        "loop": "asyncio",
        "http": BoundedHttpToolsProtocol,
        "ws": "websockets-sansio",
        "ws_max_size": WEBSOCKET_MESSAGE_BYTES,
        "proxy_headers": bool(TRUSTED_PROXIES),
        "forwarded_allow_ips": ",".join(TRUSTED_PROXIES),
        "lifespan": "on",
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        logging.getLogger("uvicorn.access").addFilter(PollsAtDebug())
