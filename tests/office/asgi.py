"""Requests through Django's real ASGI handler, so async views run as under uvicorn (disconnects too)."""

import asyncio
from dataclasses import dataclass, field

from django.core.asgi import get_asgi_application


@dataclass
class AsgiResponse:
    status: int = 0
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


async def asgi_get(path: str, *, token: str, disconnected: asyncio.Event | None = None) -> AsgiResponse:
    """GET ``path`` as a bearer of ``token``; the client goes away once ``disconnected`` is set."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"authorization", f"Bearer {token}".encode())],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    response = AsgiResponse()
    body_sent = False
    gone = disconnected or asyncio.Event()

    async def receive():
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        if message["type"] == "http.response.start":
            response.status = message["status"]
            response.headers = {key.decode(): value.decode() for key, value in message["headers"]}
        elif message["type"] == "http.response.body":
            response.body += message.get("body", b"")

    await get_asgi_application()(scope, receive, send)
    return response
