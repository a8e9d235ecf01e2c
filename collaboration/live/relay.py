"""Telling live editors of updates stored by a request rather than a socket (an API client's ``PUT`` or
update, a reconciliation during a capture).

After the storing transaction commits, the update is handed to this process's hub, which sends it to its
own sockets and, through the channel layer, to the other processes. The hub lives on the server's event
loop, noted when the server starts; a process without one (a management command) has no sockets, and the
editors connected elsewhere receive the update at their next periodic resync.
"""

import asyncio
import logging
import threading
import uuid

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

_server_loop: asyncio.AbstractEventLoop | None = None


def server_loop_note(loop: asyncio.AbstractEventLoop) -> None:
    global _server_loop
    _server_loop = loop


def stored_after_commit(*, project_id: uuid.UUID, file_id: int, batch) -> None:
    """Within the storing transaction: relay ``batch.stored`` once it commits."""
    if batch.stored is None or _server_loop is None:
        return
    update, stored_from, last_seq, loop = batch.stored, batch.stored_from, batch.last_seq, _server_loop

    def relay() -> None:
        from collaboration.live.hub import hub

        async def send() -> None:
            await hub().stored_here(file_id=file_id, update=update, stored_from=stored_from, last_seq=last_seq)

        try:
            asyncio.run_coroutine_threadsafe(send(), loop)
        except RuntimeError:  # the loop closed: the server is stopping
            logger.warning("a stored update was not relayed to live editors", extra={"file_id": file_id})

    transaction.on_commit(relay)


def project_changed(*, project_id: uuid.UUID, what: str) -> None:
    """After commit: tell every page of the project open anywhere that ``what`` changed (its tree, its output,
    its members). A server process hands it to its hub (its own pages hear of it first); any other process (the
    maintenance loop finishing a build, a management command changing a grant) sends it straight to the channel
    layer, from which every server's hub takes it."""
    loop = _server_loop
    if loop is None:
        if settings.COLLAB_EVENTS_FROM_OTHER_PROCESSES:
            _project_changed_elsewhere(project_id, what)
        return

    async def tell() -> None:
        from collaboration.live.hub import hub

        await hub().projects.changed_here(project_id, what)

    try:
        asyncio.run_coroutine_threadsafe(tell(), loop)
    except RuntimeError:
        logger.warning("a project change was not told to open pages", extra={"project": str(project_id)})


def _project_changed_elsewhere(project_id: uuid.UUID, what: str) -> None:
    """Hand the change to this process's sender: a thread with the one event loop that uses the channel layer
    here (channels-postgres keeps one connection pool per process, bound to the loop that made it, so callers
    on several threads must not each reach it through ``async_to_sync``). Nothing waits for it: pages poll
    too."""
    from collaboration.live.project_events import group_of, message_of

    group, message = group_of(project_id), message_of(project_id, what, "elsewhere")
    try:
        asyncio.run_coroutine_threadsafe(_layer_send(group, message), _sender_loop())
    except RuntimeError:  # the process is exiting
        logger.warning("a project change was not told to open pages", extra={"project": str(project_id)})


_sender: asyncio.AbstractEventLoop | None = None
_sender_lock = threading.Lock()


def _sender_loop() -> asyncio.AbstractEventLoop:
    global _sender
    with _sender_lock:
        if _sender is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="project-events-sender", daemon=True).start()
            _sender = loop
        return _sender


async def _layer_send(group: str, message: dict) -> None:
    from channels.layers import get_channel_layer

    try:  # in a process without pages only this loop uses the layer
        await get_channel_layer().group_send(group, message)
    except Exception:
        logger.warning("a project change was not told to open pages", extra={"group": group}, exc_info=True)
