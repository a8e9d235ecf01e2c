"""What changed in a project, told at once to every member with its page open.

A project page opens one socket (``/ws/projects/<project>/events``, ``project_consumer.py``) beside its
editor's. The server sends small JSON messages, never content: ``{"type": "output"}`` (a newer build became
the project's PDF), ``{"type": "tree"}`` (files or folders were made, moved or deleted), ``{"type":
"comments"}`` (a comment thread began, was answered, edited, resolved or deleted), ``{"type": "role", "role":
…}`` (this user's role changed); a user who lost the project is closed with 4403. The page then asks again,
through the ordinary authorized requests, for what it shows. A message the channel layer loses costs only
latency: pages also poll, and ask again whenever this socket reconnects.

Each server process keeps one ``ProjectRoom`` per project open here, a member of the project's channel-layer
group (as the process's hub is of its documents' groups), so an event costs one message per process.
Workspace, Access and Collaboration's own services announce their changes with signals after commit;
``relay.project_changed`` carries them to the hub on the server's event loop, which tells its own sockets and
the other processes.
"""

import asyncio
import logging
import time
import uuid
from typing import Protocol

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


class ProjectSocket(Protocol):
    """What a room asks of a project page's socket (``project_consumer.ProjectEventsConsumer``)."""

    user_id: int
    session_key: str
    role: str
    last_heard: float

    def tell(self, message: dict) -> None: ...

    def close_with(self, code: int, reason: str) -> None: ...


class ProjectRoom:
    """The sockets of one project open in this process."""

    def __init__(self, rooms: "ProjectRooms", project_id: uuid.UUID):
        self.rooms, self.project_id = rooms, project_id
        self.sockets: set[ProjectSocket] = set()
        self._watching: asyncio.Task | None = None

    def attach(self, socket: ProjectSocket) -> None:
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

    async def attach(self, socket: ProjectSocket, project_id: uuid.UUID) -> ProjectRoom:
        await self.hub.start()
        room = self.rooms.get(project_id)
        if room is None:
            room = self.rooms[project_id] = ProjectRoom(self, project_id)
            await self.hub.group_join(group_of(project_id))
        room.attach(socket)
        return room

    async def detach(self, socket: ProjectSocket, room: ProjectRoom) -> None:
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
