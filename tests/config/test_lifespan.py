"""The server's start and stop (ASGI lifespan) as ``config/asgi.py`` routes them: live editing starts before the
server says it has started, and a failure to stop it is logged without keeping the server from stopping."""

import asyncio

from config.http import protocols


def _lifespan(*messages: str, sent: list | None = None) -> list[str]:
    """What the application sends for these lifespan messages, in order (appended to ``sent`` when given)."""
    incoming, sent = [{"type": message} for message in messages], [] if sent is None else sent

    async def receive():
        return incoming.pop(0)

    async def send(message):
        sent.append(message["type"])

    asyncio.run(protocols.live_editing_lifespan({"type": "lifespan"}, receive, send))
    return sent


def test_live_editing_starts_before_startup_completes_and_stops_before_shutdown_does(monkeypatch):
    events = []

    async def started():
        events.append("live editing started")

    async def stopped():
        events.append("live editing stopped")

    monkeypatch.setattr(protocols.collaboration, "live_server_start", started)
    monkeypatch.setattr(protocols.collaboration, "live_server_stop", stopped)

    _lifespan("lifespan.startup", "lifespan.shutdown", sent=events)

    assert events == [
        "live editing started",
        "lifespan.startup.complete",
        "live editing stopped",
        "lifespan.shutdown.complete",
    ]


def test_a_failure_to_stop_live_editing_is_logged_and_the_server_stops_anyway(monkeypatch, caplog):
    async def started():
        pass

    async def failing():
        raise RuntimeError("the channel layer is gone")

    monkeypatch.setattr(protocols.collaboration, "live_server_start", started)
    monkeypatch.setattr(protocols.collaboration, "live_server_stop", failing)

    assert _lifespan("lifespan.startup", "lifespan.shutdown")[-1] == "lifespan.shutdown.complete"
    assert "stopping live editing failed" in caplog.text
