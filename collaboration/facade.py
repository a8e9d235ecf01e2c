"""What other contexts (and the ASGI application) may ask Collaboration."""

import asyncio
import logging

from collaboration import services

__all__ = [
    "live_server_start",
    "live_server_stop",
    "logs_upkeep",
    "websocket_urlpatterns",
]


def logs_upkeep() -> dict[str, int]:
    """The maintenance loop's share: project documents a dead process left behind, fold quiet logs into
    their snapshots, forget the sockets of dead processes. Returns how many of each."""
    return {
        "projected": services.projections_overdue_flush(),
        "compacted": services.logs_compact_due(),
        "forgotten_sockets": services.connections_forgotten_delete(),
        "expired_layer_messages": services.channel_messages_expired_delete(),
    }


def websocket_urlpatterns() -> list:
    from collaboration.live.routing import websocket_urlpatterns as patterns

    return patterns


async def live_server_start() -> None:
    """The server's event loop started: requests may hand stored updates to its hub from now on."""
    from collaboration.live import relay
    from collaboration.live.hub import hub

    relay.server_loop_note(asyncio.get_running_loop())
    try:
        await hub().start()
    except Exception:  # the database may be starting too: the hub starts with the first socket instead
        logging.getLogger(__name__).exception("live editing could not join the channel layer yet")


async def live_server_stop() -> None:
    from collaboration.live.hub import hub

    await hub().stop()
