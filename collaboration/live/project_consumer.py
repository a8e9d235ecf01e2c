"""A project page's events socket (``/ws/projects/<project>/events``): what it may hear, and from whom, is in
``project_events``; this is the socket, which joins its project's room in the process's hub.
"""

import asyncio
import json
import time

from channels.generic.websocket import AsyncWebsocketConsumer

from collaboration import services
from collaboration.live import database
from collaboration.live.hub import hub
from collaboration.live.project_events import MAX_FRAME_BYTES, ProjectRoom
from collaboration.live.protocol import CloseCode


class ProjectEventsConsumer(AsyncWebsocketConsumer):
    """A project page's socket. Who may connect is decided before the handshake completes (a signed-in member
    who may view the project, from the site's own origin: ``config.http.websocket_origin``); anyone else gets
    the same plain 403."""

    channel_layer_alias = None
    room: ProjectRoom | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close()
            return
        self.user_id, self.project_id = user.pk, self.scope["url_route"]["kwargs"]["project_id"]
        self.session_key = self.scope["session"].session_key
        self.role = await database.run(
            self.project_id.int, services.role_of, user_id=self.user_id, project_id=self.project_id
        )
        if self.role is None:
            await self.close()  # before the handshake completes: a plain 403
            return
        self.last_heard = time.monotonic()
        self._closing = False
        self._outbox: asyncio.Queue[str | None] = asyncio.Queue()
        self.room = await hub().projects.attach(self, self.project_id)
        await self.accept()
        self._writer = asyncio.get_running_loop().create_task(self._write())
        self.tell({"type": "hello", "role": self.role})

    async def receive(self, text_data=None, bytes_data=None) -> None:
        self.last_heard = time.monotonic()
        if len(text_data or bytes_data or "") > MAX_FRAME_BYTES:
            self.close_with(CloseCode.TOO_LARGE, "A project page only says ping.")
        elif text_data == "ping":
            self.tell({"type": "pong"})

    def tell(self, message: dict) -> None:
        if not self._closing:
            self._outbox.put_nowait(json.dumps(message))

    def close_with(self, code: int, reason: str) -> None:
        if self._closing:
            return
        self.tell({"type": "closed", "code": code, "message": reason})
        self._closing = True
        self._close_as = (code, reason)
        self._outbox.put_nowait(None)

    async def _write(self) -> None:
        while True:
            frame = await self._outbox.get()
            if frame is None:
                await self.close(code=self._close_as[0], reason=self._close_as[1][:120])
                return
            await self.send(text_data=frame)

    async def disconnect(self, code) -> None:
        self._closing = True
        if self.room is None:
            return
        writer = getattr(self, "_writer", None)
        if writer is not None and not writer.done():
            writer.cancel()
        await hub().projects.detach(self, self.room)
