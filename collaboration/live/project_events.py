"""What changed in a project, told at once to every member with its page open.

A project page opens one socket here (``/ws/projects/<project>/events``) beside its editor's. The server sends
small JSON messages, never content: ``{"type": "output"}`` (a newer build became the project's PDF),
``{"type": "tree"}`` (files or folders were made, moved or deleted), ``{"type": "comments"}`` (a comment thread
began, was answered, edited, resolved or deleted), ``{"type": "role", "role": …}`` (this
user's role changed); a user who lost the project is closed with 4403. The page then asks again, through the
ordinary authorized requests, for what it shows. A message the channel layer loses costs only latency: pages
also poll, and ask again whenever this socket reconnects.

Each server process keeps one ``ProjectRoom`` per project open here, a member of the project's channel-layer
group (as the process's hub is of its documents' groups), so an event costs one message per process. Workspace
and Access announce their changes with signals after commit; ``changed`` carries them to the hub on the
server's event loop (``relay``'s way), which tells its own sockets and the other processes.
"""

import asyncio
import json
import logging
import time
import uuid

from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from collaboration import services
from collaboration.live import database
from collaboration.live.protocol import SIGNED_OUT_MESSAGE, CloseCode

logger = logging.getLogger(__name__)

MAX_FRAME_BYTES = 1024  # a page only ever says "ping"
MEMBERS = "members"


def group_of(project_id: uuid.UUID) -> str:
    return f"collab.project.{project_id}"


def message_of(project_id: uuid.UUID, what: str, origin: str) -> dict:
    return {"type": "collab.project", "origin": origin, "project_id": str(project_id), "what": what}


class ProjectRoom:
    """The sockets of one project open in this process."""

    def __init__(self, rooms: "ProjectRooms", project_id: uuid.UUID):
        self.rooms, self.project_id = rooms, project_id
        self.sockets: set[ProjectEventsConsumer] = set()
        self._watching: asyncio.Task | None = None

    def attach(self, socket: "ProjectEventsConsumer") -> None:
        self.sockets.add(socket)
        if self._watching is None:
            self._watching = asyncio.get_running_loop().create_task(self._watch())

    def tell(self, what: str) -> None:
        for socket in list(self.sockets):
            socket.tell({"type": what})

    async def access_check(self) -> None:
        """Re-read every socket's role now: a removed member is closed, a changed role is told."""
        sockets = list(self.sockets)
        if not sockets:
            return
        try:
            access = await database.run(
                self.project_id.int,
                services.project_access,
                project_id=self.project_id,
                sessions_by_key={socket.session_key: socket.user_id for socket in sockets},
            )
        except Exception:
            logger.exception("re-reading project members' access failed", extra={"project": str(self.project_id)})
            return
        idle_before = time.monotonic() - settings.COLLAB_IDLE_SECONDS
        for socket in sockets:
            role = access.roles.get(socket.user_id)
            if access.signed_out(socket.session_key):
                socket.close_with(CloseCode.SIGNED_OUT, SIGNED_OUT_MESSAGE)
            elif role is None:
                socket.close_with(CloseCode.FORBIDDEN, "Your access to this project was removed.")
            elif socket.last_heard < idle_before:
                socket.close_with(CloseCode.IDLE, "Closed after a long silence.")
            elif role != socket.role:
                socket.role = role
                socket.tell({"type": "role", "role": role})

    async def _watch(self) -> None:
        """Every few seconds, as the documents' watch does: a change of access made where no signal reached us
        (a grant edited in the database, a deactivated account) is seen all the same."""
        while self.sockets:
            await asyncio.sleep(settings.COLLAB_ACCESS_CHECK_SECONDS)
            await self.access_check()
        self._watching = None


class ProjectRooms:
    """This process's project rooms, and their place on the channel layer (through its hub)."""

    def __init__(self, hub):
        self.hub = hub
        self.rooms: dict[uuid.UUID, ProjectRoom] = {}

    async def attach(self, socket: "ProjectEventsConsumer", project_id: uuid.UUID) -> ProjectRoom:
        await self.hub.start()
        room = self.rooms.get(project_id)
        if room is None:
            room = self.rooms[project_id] = ProjectRoom(self, project_id)
            await self.hub.group_join(group_of(project_id))
        room.attach(socket)
        return room

    async def detach(self, socket: "ProjectEventsConsumer", room: ProjectRoom) -> None:
        room.sockets.discard(socket)
        if not room.sockets and self.rooms.get(room.project_id) is room:
            del self.rooms[room.project_id]
            await self.hub.group_leave(group_of(room.project_id))

    async def changed_here(self, project_id: uuid.UUID, what: str) -> None:
        """A change committed by this process: tell its own sockets, then the other processes."""
        await self.hub.start()
        await self.received(project_id, what)
        await self.hub.group_send(group_of(project_id), message_of(project_id, what, self.hub.id))

    async def received(self, project_id: uuid.UUID, what: str) -> None:
        if what == MEMBERS:
            # Documents open here re-read their editors' access at once too (a demoted editor is read-only now).
            for document in list(self.hub.documents.values()):
                if document.project_id == project_id:
                    asyncio.get_running_loop().create_task(document.access_check())
        room = self.rooms.get(project_id)
        if room is None:
            return
        if what == MEMBERS:
            await room.access_check()
        else:
            room.tell(what)


class ProjectEventsConsumer(AsyncWebsocketConsumer):
    """A project page's socket. Who may connect is decided before the handshake completes (a signed-in member
    who may view the project, from the site's own origin: ``config.http.websocket_origin``); anyone else gets
    the same plain 403."""

    channel_layer_alias = None
    room: ProjectRoom | None = None

    async def connect(self) -> None:
        from collaboration.live.hub import hub

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
        from collaboration.live.hub import hub

        self._closing = True
        if self.room is None:
            return
        writer = getattr(self, "_writer", None)
        if writer is not None and not writer.done():
            writer.cancel()
        await hub().projects.detach(self, self.room)
