"""Under ASGI the middleware chain crosses into its thread once, and every middleware still runs."""

import asyncio

from asgiref.sync import SyncToAsync
from django.core.handlers.asgi import ASGIHandler

from config.http.asgi_handler import SyncChainASGIHandler

SCOPE = {
    "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
    "path": "/v1/projects", "raw_path": b"/v1/projects", "query_string": b"", "headers": [(b"host", b"127.0.0.1")],
    "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
}  # fmt: skip


def _get(handler, monkeypatch) -> tuple[list[dict], int]:
    """The messages sent for one anonymous GET, and how many times the request crossed into a thread."""
    sent: list[dict] = []
    crossings = []
    original = SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        crossings.append(self.func)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    requested = []

    async def receive():
        if not requested:
            requested.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.sleep(3600)  # the client stays connected

    async def send(message):
        sent.append(message)

    asyncio.run(handler(SCOPE, receive, send))
    monkeypatch.setattr(SyncToAsync, "__call__", original)
    return sent, len(crossings)


def test_the_answer_is_the_one_the_stock_handler_gives(monkeypatch, db):
    stock, _ = _get(ASGIHandler(), monkeypatch)
    ours, _ = _get(SyncChainASGIHandler(), monkeypatch)

    assert ours[0]["status"] == stock[0]["status"] == 401  # the API's own answer: the view ran
    assert ours[0]["headers"] == stock[0]["headers"]
    headers = {name.lower(): value for name, value in ours[0]["headers"]}
    assert headers[b"x-frame-options"] == b"DENY"  # XFrameOptionsMiddleware ran
    assert headers[b"x-content-type-options"] == b"nosniff"  # and SecurityMiddleware
    assert [m.get("body") for m in ours[1:]] == [m.get("body") for m in stock[1:]]


def test_the_chain_crosses_into_a_thread_once_instead_of_per_middleware(monkeypatch, db):
    _, stock = _get(ASGIHandler(), monkeypatch)
    _, ours = _get(SyncChainASGIHandler(), monkeypatch)

    # Ours: the request_started signal, the whole chain, the response's close, the 4xx log line.
    assert ours <= 4
    assert stock >= ours + 10  # two crossings for each MiddlewareMixin middleware
