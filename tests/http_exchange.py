"""One HTTP request through the server's own HTTP application (config/http/handlers.py), in this process:
what it sent back and how much of the body it took."""

import asyncio
import json
from functools import cache

from config.http.handlers import http_application


@cache
def server_http_application():
    return http_application(threads=4)


def asgi_scope(path: str, headers: list[tuple[bytes, bytes]], method: str = "PUT", raw_path: bytes | None = None):
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": raw_path or path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


def exchange(
    scope: dict, chunks: list[bytes], read: list | None = None, *, then_leave: bool = False
) -> tuple[int, dict, list]:
    """Status, JSON body and the chunks the application took, for one request whose body arrives in
    ``chunks``; the client then waits for the answer, or leaves (``then_leave``: a body cut short)."""
    sent: list[dict] = []
    last = len(chunks) - 1
    pending = [
        {"type": "http.request", "body": chunk, "more_body": then_leave or i < last} for i, chunk in enumerate(chunks)
    ]
    read = [] if read is None else read

    async def receive():
        if not pending:
            if then_leave:
                return {"type": "http.disconnect"}
            await asyncio.sleep(3600)
        read.append(pending[0]["body"])
        return pending.pop(0)

    async def send(message):
        sent.append(message)

    asyncio.run(server_http_application()(scope, receive, send))
    starts = [message["status"] for message in sent if message["type"] == "http.response.start"]
    body = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    assert len(starts) == 1
    return starts[0], json.loads(body), read
