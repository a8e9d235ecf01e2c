"""Telling live editors of updates stored by a request rather than a socket (an API client's ``PUT`` or
update, a reconciliation during a capture).

After the storing transaction commits, the update is handed to this process's hub, which sends it to its
own sockets and, through the channel layer, to the other processes. The hub lives on the server's event
loop, noted when the server starts; a process without one (a management command) has no sockets, and the
editors connected elsewhere receive the update at their next periodic resync.
"""

import asyncio
import logging
import uuid

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
