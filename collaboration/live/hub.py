"""This server process's live documents, and their place on the channel layer.

Each document with an open socket here is a ``LiveDocument``. Updates from its sockets are queued and
stored in batches (``services.updates_accept``) on the document's database thread; only once a batch has
committed are its updates sent on: to this process's other sockets directly, and to the other server
processes through the document's channel-layer group, of which each process (its hub's channel, not each
socket) is a member. So an update anyone has seen is durable, and a keystroke costs one message per
process, not one per socket. An author's socket is told what was stored (``ACKNOWLEDGED``).

Nothing here is the document: the log in PostgreSQL is. A message the channel layer loses is made good by
the editors' periodic resync (sync step 1 → the server's answer from the log).
"""

import asyncio
import logging
import time
import uuid
from collections import deque

from channels.layers import get_channel_layer
from django.conf import settings
from pycrdt import create_awareness_message, create_update_message, merge_updates

from collaboration import services
from collaboration.exceptions import LiveDocumentNotFound
from collaboration.live import database, protocol
from collaboration.live.awareness import Presences
from collaboration.live.project_events import ProjectRooms
from collaboration.live.protocol import SIGNED_OUT_MESSAGE, AwarenessEntry, CloseCode
from collaboration.log import documents as cached_documents
from collaboration.services import Outcome, Submitted

logger = logging.getLogger(__name__)

MAX_BATCH = 64
UNSENT_RETRY_SECONDS = 0.5  # between tries of stored updates the channel layer refused
PROJECTION_MAX_LAG_SECONDS = 5.0


def group_of(file_id: int) -> str:
    return f"collab.document.{file_id}"


class LiveDocument:
    def __init__(self, hub: "Hub", project_id: uuid.UUID, file_id: int):
        self.hub, self.project_id, self.file_id = hub, project_id, file_id
        self.sockets: set = set()
        self.presences = Presences()
        self._submissions: deque = deque()
        self._storing: asyncio.Task | None = None
        self._watching: asyncio.Task | None = None
        self._projection: asyncio.TimerHandle | None = None
        self._unprojected_since: float | None = None
        self.outgoing = Outgoing(hub, file_id)

    # --- sockets ---------------------------------------------------------------------------------------

    def attach(self, socket) -> None:
        self.sockets.add(socket)
        if self._watching is None:
            self._watching = asyncio.get_running_loop().create_task(self._watch())

    async def detach(self, socket) -> None:
        self.sockets.discard(socket)
        departures = self.presences.departures_of(socket)
        if departures:
            await self.presences_relay(departures, origin=socket, to_self=False)

    def broadcast(self, frame: bytes, *, except_socket=None) -> None:
        for socket in list(self.sockets):
            if socket is not except_socket:
                socket.enqueue(frame)

    # --- updates ---------------------------------------------------------------------------------------

    def submit(self, socket, update: bytes) -> None:
        self._submissions.append((socket, update))
        if self._storing is None:
            self._storing = asyncio.get_running_loop().create_task(self._store_queued())

    async def _store_queued(self) -> None:
        try:
            while self._submissions:
                batch = [self._submissions.popleft() for _ in range(min(MAX_BATCH, len(self._submissions)))]
                looked_at = await self._store(batch)
                self._submissions.extendleft(reversed(batch[looked_at:]))
        finally:
            self._storing = None

    async def _store(self, batch: list) -> int:
        submitted = [Submitted(socket.user_id, update) for socket, update in batch]
        try:
            stored = await database.run(
                self.file_id,
                services.updates_accept,
                project_id=self.project_id,
                file_id=self.file_id,
                submitted=submitted,
            )
        except LiveDocumentNotFound:
            self.close_all(CloseCode.GONE, "The document was deleted.")
            return len(batch)
        except Exception:
            # The editors still have these updates: closing makes them reconnect and sync them again.
            logger.exception("storing live updates failed", extra={"file_id": self.file_id})
            for socket, _ in batch:
                socket.close_with(CloseCode.BUSY, "The server could not save your latest change; retrying.")
            return len(batch)
        self._after_store(batch, stored)
        return len(stored.verdicts)

    def _after_store(self, batch: list, stored: services.BatchStored) -> None:
        authors = set()
        for (socket, _), verdict in zip(batch, stored.verdicts, strict=False):
            if verdict.outcome == Outcome.REFUSED:
                socket.refuse(verdict.code, verdict.message, _REFUSAL_CLOSE.get(verdict.code, CloseCode.MALFORMED))
            else:
                authors.add(socket)
        if stored.stored is not None:
            stored_rows = stored.last_seq - stored.stored_from + 1
            by_one = len(authors) == 1 and stored_rows == sum(v.outcome == Outcome.STORED for v in stored.verdicts)
            self.broadcast(create_update_message(stored.stored), except_socket=next(iter(authors)) if by_one else None)
            self.outgoing.stored(stored.stored, stored.stored_from, stored.last_seq)
            self._projection_schedule()
        acknowledgement = protocol.acknowledged(stored.state_vector)
        for socket in authors:
            socket.enqueue(acknowledgement)

    def stored_elsewhere(self, update: bytes, stored_from: int, last_seq: int) -> None:
        """Updates another process (or a request in this one) stored: send them to this process's sockets."""
        self.broadcast(create_update_message(update))
        advance = database.run(
            self.file_id, _cache_advance, file_id=self.file_id, update=update, seq_from=stored_from, seq_to=last_seq
        )
        asyncio.get_running_loop().create_task(advance)

    def close_all(self, code: int, reason: str) -> None:
        for socket in list(self.sockets):
            socket.close_with(code, reason)

    # --- presence ----------------------------------------------------------------------------------------

    async def presences_relay(self, entries, *, origin, to_self: bool = True) -> None:
        """Take in awareness entries from a local socket (``origin``) or another process (``None``)."""
        applied = self.presences.apply(entries, owner=origin)
        if not applied:
            return
        frame = create_awareness_message(protocol.awareness_update(applied))
        self.broadcast(frame, except_socket=None if to_self else origin)
        if origin is not None:
            self.outgoing.presences(applied)

    def presences_frame(self, *, owned_here_only: bool = False) -> bytes | None:
        entries = self.presences.current(owned_here_only=owned_here_only)
        return create_awareness_message(protocol.awareness_update(entries)) if entries else None

    # --- projection and access ------------------------------------------------------------------------

    def _projection_schedule(self) -> None:
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._unprojected_since = self._unprojected_since or now
        if self._projection is not None:
            self._projection.cancel()
        overdue = now - self._unprojected_since >= PROJECTION_MAX_LAG_SECONDS
        delay = 0 if overdue else settings.COLLAB_PROJECTION_DELAY_SECONDS
        self._projection = loop.call_later(delay, lambda: loop.create_task(self.project()))

    async def project(self) -> None:
        """Write the log's text into Workspace's row now (it is at most a moment behind while people type)."""
        self._projection, self._unprojected_since = None, None
        try:
            await database.run(
                self.file_id, services.projection_flush, project_id=self.project_id, file_id=self.file_id
            )
        except Exception:
            logger.exception("projecting a live document failed", extra={"file_id": self.file_id})

    async def _watch(self) -> None:
        """Every few seconds: re-read what each socket's user may do, close idle sockets, note they live."""
        period = settings.COLLAB_ACCESS_CHECK_SECONDS
        while self.sockets:
            await asyncio.sleep(period)
            await self.access_check()
        self._watching = None

    async def access_check(self) -> None:
        """Re-read now what each socket's user may do (also at once when the project's members change)."""
        sockets = list(self.sockets)
        if not sockets:
            return
        try:
            access = await database.run(
                self.file_id,
                services.live_access,
                project_id=self.project_id,
                file_id=self.file_id,
                sessions_by_key={socket.session_key: socket.user_id for socket in sockets},
                connection_ids=[socket.connection_id for socket in sockets],
            )
        except Exception:
            logger.exception("re-reading live editors' access failed", extra={"file_id": self.file_id})
            return
        self._apply_access(sockets, access)

    def _apply_access(self, sockets: list, access: services.Access) -> None:
        idle_before = time.monotonic() - settings.COLLAB_IDLE_SECONDS
        for socket in sockets:
            if not access.document_exists:
                socket.close_with(CloseCode.GONE, "The document was deleted.")
            elif access.signed_out(socket.session_key):
                socket.close_with(CloseCode.SIGNED_OUT, SIGNED_OUT_MESSAGE)
            elif not access.may_view(socket.user_id):
                socket.close_with(CloseCode.FORBIDDEN, "Your access to this project was removed.")
            elif socket.last_heard < idle_before:
                socket.close_with(CloseCode.IDLE, "Closed after a long silence.")
            else:
                socket.may_edit_set(access.may_edit(socket.user_id))


_REFUSAL_CLOSE = {
    "forbidden": CloseCode.FORBIDDEN,
    "invalid_update": CloseCode.MALFORMED,
    "update_too_large": CloseCode.TOO_LARGE,
    "document_too_large": CloseCode.TOO_LARGE,
}


def _cache_advance(*, file_id: int, update: bytes, seq_from: int, seq_to: int) -> None:
    """Apply another process's stored updates to this process's cached state, if it is the state just before."""
    doc = cached_documents.take(file_id, seq_from - 1)
    if doc is not None:
        doc.apply_update(update)
        cached_documents.put(file_id, seq_to, doc)


class Outgoing:
    """What one document sends the other processes, in order: one message in flight at a time, and what
    piles up meanwhile merged into the next (stored updates into one update, presences latest-first), so a
    burst of keystrokes costs a few channel-layer messages rather than one each."""

    def __init__(self, hub: "Hub", file_id: int):
        self._hub, self._file_id = hub, file_id
        self._updates: list[tuple[bytes, int, int]] = []
        self._presences: dict[int, AwarenessEntry] = {}
        self._sending: asyncio.Task | None = None

    def stored(self, update: bytes, stored_from: int, last_seq: int) -> None:
        self._updates.append((update, stored_from, last_seq))
        self._kick()

    def presences(self, entries) -> None:
        for entry in entries:
            self._presences[entry.client_id] = entry
        self._kick()

    def _kick(self) -> None:
        if self._sending is None:
            self._sending = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        try:
            while self._updates or self._presences:
                if self._updates and not await self._send_updates():
                    await asyncio.sleep(UNSENT_RETRY_SECONDS)
                    continue
                if self._presences:
                    entries, self._presences = list(self._presences.values()), {}
                    await self._hub.send(self._file_id, _awareness_message(self._hub.id, self._file_id, entries))
        finally:
            self._sending = None

    async def _send_updates(self) -> bool:
        """Send what was stored, run by run; False, with the runs not sent put back first in line, when the
        channel layer refuses one (the database restarting, say). Stored updates are sent until they go:
        the other processes' editors would otherwise miss them until their own periodic resync."""
        updates, self._updates = self._updates, []
        runs = _contiguous_runs(updates)
        for index, run in enumerate(runs):
            merged = merge_updates(*[update for update, _, _ in run])
            if not await self._hub.send(
                self._file_id, _stored_message(self._hub.id, self._file_id, merged, run[0][1], run[-1][2])
            ):
                self._updates[:0] = [update for unsent in runs[index:] for update in unsent]
                return False
        return True


def _contiguous_runs(updates: list[tuple[bytes, int, int]]) -> list[list[tuple[bytes, int, int]]]:
    """Split stored batches where another process stored in between: a merged message names one range of
    the log (its receivers may advance their cached state by it only if nothing is missing from it)."""
    runs: list[list[tuple[bytes, int, int]]] = []
    for update in updates:
        if runs and runs[-1][-1][2] + 1 == update[1]:
            runs[-1].append(update)
        else:
            runs.append([update])
    return runs


def _stored_message(origin: str, file_id: int, update: bytes, stored_from: int, last_seq: int) -> dict:
    return {
        "type": "collab.stored",
        "origin": origin,
        "file_id": file_id,
        "update": update,
        "stored_from": stored_from,
        "last_seq": last_seq,
    }


def _awareness_message(origin: str, file_id: int, entries) -> dict:
    return {
        "type": "collab.awareness",
        "origin": origin,
        "file_id": file_id,
        "update": protocol.awareness_update(entries),
    }


class Hub:
    """One per server process (and event loop)."""

    def __init__(self):
        self.id = uuid.uuid4().hex
        self.documents: dict[int, LiveDocument] = {}
        self._layer = get_channel_layer()
        self._channel: str | None = None
        self._receiving: asyncio.Task | None = None
        self._starting = asyncio.Lock()
        self._joined: set[int] = set()
        self.projects = ProjectRooms(self)

    async def start(self) -> None:
        async with self._starting:
            if self._channel is None:
                self._channel = await self._layer.new_channel("collab-hub.")
                self._receiving = asyncio.get_running_loop().create_task(self._receive())

    async def attach(self, socket, *, project_id: uuid.UUID, file_id: int) -> LiveDocument:
        """Give the socket its live document; the process joins the document's group first, so that nothing
        another process stores after the socket reads the state goes past it."""
        await self.start()
        document = self.documents.get(file_id)
        if document is None:
            document = self.documents[file_id] = LiveDocument(self, project_id, file_id)
        document.attach(socket)
        if file_id not in self._joined:
            self._joined.add(file_id)
            await self._layer.group_add(group_of(file_id), self._channel)
            await self.send(file_id, {"type": "collab.awareness_query", "origin": self.id, "file_id": file_id})
        return document

    async def detach(self, socket, document: LiveDocument) -> None:
        await document.detach(socket)
        if document.sockets:
            return
        await document.project()
        if not document.sockets and self.documents.get(document.file_id) is document:
            del self.documents[document.file_id]
            self._joined.discard(document.file_id)
            await self._layer.group_discard(group_of(document.file_id), self._channel)

    async def send(self, file_id: int, message: dict) -> bool:
        """Send to the other processes with this document open; False if the channel layer refused it (a
        failure here loses nothing durable)."""
        return await self.group_send(group_of(file_id), message)

    async def group_send(self, group: str, message: dict) -> bool:
        try:
            await self._layer.group_send(group, message)
        except Exception:
            logger.exception("publishing to the channel layer failed", extra={"group": group})
            return False
        return True

    async def group_join(self, group: str) -> None:
        await self._layer.group_add(group, self._channel)

    async def group_leave(self, group: str) -> None:
        await self._layer.group_discard(group, self._channel)

    async def stored_here(self, *, file_id: int, update: bytes, stored_from: int, last_seq: int) -> None:
        """Updates a request of this process stored beside the sockets: to local sockets and other processes."""
        await self.start()
        document = self.documents.get(file_id)
        if document is not None:
            document.stored_elsewhere(update, stored_from, last_seq)
        await self.send(file_id, _stored_message(self.id, file_id, update, stored_from, last_seq))

    async def _receive(self) -> None:
        while True:
            try:
                message = await self._layer.receive(self._channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("receiving from the channel layer failed")
                await asyncio.sleep(1)
                continue
            if message.get("origin") == self.id:
                continue
            try:
                await self._dispatch(message)
            except Exception:
                logger.exception("a channel-layer message could not be handled", extra={"kind": message.get("type")})

    async def _dispatch(self, message: dict) -> None:
        if message["type"] == "collab.project":
            await self.projects.received(uuid.UUID(message["project_id"]), message["what"])
            return
        document = self.documents.get(message.get("file_id"))
        if document is None:
            return
        kind = message["type"]
        if kind == "collab.stored":
            document.stored_elsewhere(message["update"], message["stored_from"], message["last_seq"])
        elif kind == "collab.awareness":
            await document.presences_relay(protocol.awareness_entries(message["update"]), origin=None)
        elif kind == "collab.awareness_query":
            entries = document.presences.current(owned_here_only=True)
            if entries:
                document.outgoing.presences(entries)

    async def stop(self) -> None:
        """Project every document open here, then leave the channel layer (a graceful shutdown)."""
        for document in list(self.documents.values()):
            await document.project()
        if self._receiving is not None:
            self._receiving.cancel()


_hubs: dict[asyncio.AbstractEventLoop, Hub] = {}


def hub() -> Hub:
    """This event loop's hub (a server process has one loop)."""
    loop = asyncio.get_running_loop()
    if loop not in _hubs:
        _hubs[loop] = Hub()
    return _hubs[loop]
