"""The editor's socket: one WebSocket per open text document, speaking y-websocket's protocol.

Who may connect is decided before the handshake completes: a signed-in session (Channels' session
authentication) from the site's own origin (``config.http.websocket_origin``), on a project the user may
see, naming a text document of it. Anything else is refused with the same plain 403, so a stranger learns
nothing about the document. After that, every message is checked: its size, the socket's message rate,
that it decodes, and for an update that the user may edit (re-read every few seconds by the document's
watch, which also closes the socket of a user who lost access).
"""

import asyncio
import logging
import time
import uuid

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from pycrdt._sync import create_sync_step1_message, create_sync_step2_message  # not re-exported by pycrdt

from collaboration import services
from collaboration.exceptions import LiveDocumentNotFound, TooManyConnections
from collaboration.live import database, protocol
from collaboration.live.awareness import entry_sanitized
from collaboration.live.hub import LiveDocument, hub
from collaboration.live.protocol import (
    AwarenessMessage,
    CloseCode,
    MalformedMessage,
    QueryAwarenessMessage,
    SyncMessage,
    SyncStep,
)
from collaboration.live.rates import TokenBucket

logger = logging.getLogger(__name__)

MAX_QUEUED_BYTES = 16 * 1024 * 1024  # what a socket may have waiting to be sent before it counts as stuck


class DocumentConsumer(AsyncWebsocketConsumer):
    # A socket receives nothing from the channel layer itself: its process's hub does, once per process
    # (``collaboration/live/hub.py``). Without a layer alias Channels gives the socket no channel of its own.
    channel_layer_alias = None
    document: LiveDocument | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        route = self.scope["url_route"]["kwargs"]
        if user is None or not user.is_authenticated:
            await self.close()
            return
        self.user_id, self.project_id, self.file_id = user.pk, route["project_id"], route["file_id"]
        self.session_key = self.scope["session"].session_key  # re-checked every access check: signed out closes
        self.connection_id = uuid.uuid4()
        self.last_heard = time.monotonic()
        self.client_ids: set[int] = set()
        self._closing = False
        self._queued_bytes = 0
        self._outbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._rate = TokenBucket(per_second=settings.COLLAB_MESSAGES_PER_SECOND, burst=settings.COLLAB_MESSAGE_BURST)
        try:
            opened = await database.run(
                self.file_id,
                services.connection_open,
                connection_id=self.connection_id,
                user_id=self.user_id,
                project_id=self.project_id,
                file_id=self.file_id,
            )
        except LiveDocumentNotFound:
            await self.close()  # before the handshake completes: a plain 403
            return
        except TooManyConnections as exc:
            await self.accept()
            await self.close(code=CloseCode.TOO_MANY, reason=exc.message[:120])
            return
        self.username, self.colour, self.may_edit = opened.username, opened.colour, opened.may_edit
        self.document = await hub().attach(self, project_id=self.project_id, file_id=self.file_id)
        await self.accept()
        self._writer = asyncio.get_running_loop().create_task(self._write())
        await self._greet()

    async def _greet(self) -> None:
        """Sync step 1 with the server's state (the editor answers with what the server lacks), and who is here."""
        try:
            state_vector = await database.run(
                self.file_id, services.live_state_vector, project_id=self.project_id, file_id=self.file_id
            )
        except LiveDocumentNotFound:
            self.close_with(CloseCode.GONE, "The document was deleted.")
            return
        self.enqueue(create_sync_step1_message(state_vector))
        if not self.may_edit:
            self.enqueue(protocol.refused("read_only", "You can read this document but not change it."))
        if (presences := self.document.presences_frame()) is not None:
            self.enqueue(presences)

    async def receive(self, text_data=None, bytes_data=None) -> None:
        if self._closing:
            return
        self.last_heard = time.monotonic()
        if bytes_data is None:
            self.close_with(CloseCode.MALFORMED, "Send binary frames only.")
            return
        if len(bytes_data) > settings.COLLAB_MAX_UPDATE_BYTES:
            self.close_with(CloseCode.TOO_LARGE, f"Frames are limited to {settings.COLLAB_MAX_UPDATE_BYTES} bytes.")
            return
        if not self._rate.take():
            self.close_with(CloseCode.TOO_FAST, "Too many messages; reconnecting will sync what was not taken.")
            return
        try:
            await self._handle(protocol.message_parse(bytes_data))
        except MalformedMessage as exc:
            self.close_with(CloseCode.MALFORMED, f"Malformed frame: {exc}")
        except Exception:
            logger.exception("a live editor's message could not be handled", extra={"file_id": self.file_id})
            self.close_with(CloseCode.BUSY, "The server could not handle that just now; reconnecting.")

    async def _handle(self, message) -> None:
        if isinstance(message, SyncMessage):
            if message.step == SyncStep.STEP1:
                await self._answer_sync(message.payload)
            elif message.payload != protocol.EMPTY_UPDATE:
                if not self.may_edit:
                    self.refuse("forbidden", "You may read this document but not change it.", CloseCode.FORBIDDEN)
                    return
                self.document.submit(self, message.payload)
        elif isinstance(message, AwarenessMessage):
            await self._announce(protocol.awareness_entries(message.update))
        elif isinstance(message, QueryAwarenessMessage) and (frame := self.document.presences_frame()):
            self.enqueue(frame)

    async def _answer_sync(self, state_vector: bytes) -> None:
        try:
            update = await database.run(
                self.file_id,
                services.live_diff,
                project_id=self.project_id,
                file_id=self.file_id,
                state_vector=state_vector,
            )
        except LiveDocumentNotFound:
            self.close_with(CloseCode.GONE, "The document was deleted.")
            return
        except ValueError as exc:  # the state vector does not decode
            raise MalformedMessage("The state vector does not decode.") from exc
        self.enqueue(create_sync_step2_message(update))

    async def _announce(self, entries) -> None:
        sanitized = []
        for entry in entries:
            if not self.document.presences.may_announce(entry.client_id, self):
                continue  # another socket's editor: nobody speaks for others
            self.client_ids.add(entry.client_id)
            sanitized.append(entry_sanitized(entry, username=self.username, colour=self.colour))
        if sanitized:
            await self.document.presences_relay(sanitized, origin=self)

    # --- what the document calls -------------------------------------------------------------------------

    def enqueue(self, frame: bytes) -> None:
        """Send ``frame`` in order without waiting; a socket whose editor does not keep up is closed."""
        if self._closing:
            return
        self._queued_bytes += len(frame)
        if self._queued_bytes > MAX_QUEUED_BYTES:
            self.close_with(CloseCode.SLOW_READER, "The connection fell behind; reconnecting.")
            return
        self._outbox.put_nowait(frame)

    def refuse(self, code: str, message: str, close_code: int) -> None:
        self.enqueue(protocol.refused(code, message))
        self.close_with(close_code, message)

    def may_edit_set(self, may_edit: bool) -> None:
        if may_edit != self.may_edit:
            self.may_edit = may_edit
            if may_edit:
                self.enqueue(protocol.refused("editable", "You can edit this document again."))
            else:
                self.enqueue(protocol.refused("read_only", "You can read this document but no longer change it."))

    def close_with(self, code: int, reason: str) -> None:
        """Close after what is queued has been sent (a refusal's explanation included)."""
        if self._closing:
            return
        self._closing = True
        self._close_as = (code, _close_reason(reason))
        self._outbox.put_nowait(None)

    async def _write(self) -> None:
        while True:
            frame = await self._outbox.get()
            if frame is None:
                code, reason = self._close_as
                await self.close(code=code, reason=reason)
                return
            self._queued_bytes -= len(frame)
            await self.send(bytes_data=frame)

    async def disconnect(self, code) -> None:
        self._closing = True
        if self.document is None:
            return
        writer = getattr(self, "_writer", None)
        if writer is not None and not writer.done():
            writer.cancel()
        await hub().detach(self, self.document)
        try:
            await database.run(self.file_id, services.connection_close, connection_id=self.connection_id)
        except Exception:
            logger.exception("forgetting a closed live connection failed")


def _close_reason(reason: str) -> str:
    """A WebSocket close reason holds at most 123 bytes of UTF-8."""
    encoded = reason.encode("utf-8")[:123]
    return encoded.decode("utf-8", errors="ignore")
