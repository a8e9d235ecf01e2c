"""Which origins a WebSocket handshake is accepted from, checked on the ASGI application itself (the live editing
tests check the same refusal end to end, through a real server)."""

import asyncio

import pytest
from django.test import override_settings

from config.http.websocket_origin import SameOriginWebSockets

HOST = "quire.example.org:8443"
TRUSTED = "https://editor.example.com"


def _handshake(origin: str | None, host: str | None = HOST) -> list[dict]:
    """What the application sends for a handshake with these headers; ``["accepted"]`` if it let it through,
    and ``"read"`` for each message it reads (a refusal reads none: no consumer, so no channel layer, is run)."""
    headers = [(b"host", host.encode())] if host is not None else []
    headers += [(b"origin", origin.encode())] if origin is not None else []
    sent = []

    async def inner(scope, receive, send):
        sent.append("accepted")

    async def send(message):
        sent.append(message)

    async def receive():
        sent.append("read")
        return {"type": "websocket.disconnect", "code": 1006}

    with override_settings(CSRF_TRUSTED_ORIGINS=[TRUSTED]):
        application = SameOriginWebSockets(inner)
    asyncio.run(application({"type": "websocket", "headers": headers}, receive, send))
    return sent


@pytest.mark.parametrize(
    "origin",
    [f"https://{HOST}", f"http://{HOST}", "https://QUIRE.example.org:8443", TRUSTED, "https://editor.example.com:443"],
)
def test_the_sites_own_origin_and_a_trusted_one_are_accepted(origin):
    assert _handshake(origin) == ["accepted"]


@pytest.mark.parametrize(
    "origin",
    [
        None,
        "null",
        "https://evil.example",
        "https://quire.example.org",  # the right host on another port
        "https://quire.example.org:9443",
        "https://quire.example.org:8443.evil.example",
        "https://evil.quire.example.org:8443",
        "ws://quire.example.org:8443",
        "https://quire.example.org:not-a-port",
        "http://editor.example.com",  # a trusted origin's host over another scheme
    ],
)
def test_any_other_origin_is_refused_before_the_handshake_completes(origin):
    assert _handshake(origin) == [{"type": "websocket.close"}]


def test_without_a_host_only_a_trusted_origin_is_accepted():
    assert _handshake(f"https://{HOST}", host=None) == [{"type": "websocket.close"}]
    assert _handshake(TRUSTED, host=None) == ["accepted"]


def test_a_host_that_is_not_a_host_refuses_rather_than_fails():
    assert _handshake("https://quire.example.org:8443", host="quire.example.org:x") == [{"type": "websocket.close"}]
