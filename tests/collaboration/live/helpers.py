"""Real servers, real sockets and the database's view of a live document, for the live editing tests.

A test is synchronous (the database fixtures are) and runs its socket code with ``asyncio.run``. The ORM is
called from inside that event loop on purpose (the conftest lifts Django's async guard for the test process
only): a hook on a client reads the database the very moment a frame arrives, with nothing else running.
"""

import asyncio
import os
import signal
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import requests
from django.db import connection
from django.test import Client
from pycrdt import Doc
from websockets.exceptions import ConnectionClosed, InvalidStatus

from collaboration import services
from collaboration.live import protocol
from collaboration.live.client import LiveClient
from collaboration.log import log_doc
from collaboration.models import AcceptedUpdate, DocumentLog
from tests.factories import bearer_token_for
from tests.live_server import free_port, quire_server
from tests.processing.factories import deployment_toml
from workspace import facade as workspace
from workspace.models import ProjectFile

# What every server of these tests runs with, beside a module's own settings: projection soon after typing
# pauses (the tests wait for it), and Django's async guard kept on in the server whatever the test process does.
BASE_ENV = {"COLLAB_PROJECTION_DELAY_SECONDS": "0.2", "DJANGO_ALLOW_ASYNC_UNSAFE": ""}


class LiveServer:
    """A Quire server process that a test may terminate (SIGTERM) or kill (SIGKILL) and start again on the same
    port. Its log is ``log_path`` (``server-<port>.log`` beside its storage, appended to across restarts)."""

    def __init__(self, root: Path, env: dict[str, str] | None = None):
        self.root = root
        self.storage = root / "storage"
        self.storage.mkdir(exist_ok=True)
        deployment = root / "deployment.toml"
        deployment.write_text(deployment_toml(operations=["test.echo/v1"]))
        self.env = {**BASE_ENV, "QUIRE_DEPLOYMENT_FILE": str(deployment), **(env or {})}
        self.port = free_port()
        self._stack: ExitStack | None = None
        self._process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def origin(self) -> str:
        return self.url

    @property
    def log_path(self) -> Path:
        return self.root / f"server-{self.port}.log"

    @property
    def application_name(self) -> str:
        return f"quire-live-test-{self.port}"

    def start(self) -> "LiveServer":
        stack = ExitStack()
        # libpq names every connection the server opens (Django's, the channel layer's) after it, so that
        # stopping can wait until PostgreSQL has let go of them all.
        env = {**self.env, "PGAPPNAME": self.application_name}
        started, popen = [], subprocess.Popen

        def popen_noted(*args, **kwargs):  # the process ``quire_server`` starts, so that ``kill`` can kill it
            started.append(popen(*args, **kwargs))
            return started[-1]

        with mock.patch.object(subprocess, "Popen", popen_noted):
            stack.enter_context(quire_server(storage_dir=self.storage, extra_env=env, port=self.port))
        self._stack, self._process = stack, started[0]
        return self

    def terminate(self) -> None:
        """SIGTERM and wait for the process to exit (``quire_server``'s own stop: a graceful shutdown)."""
        if self._stack is not None:
            stack, self._stack = self._stack, None
            stack.close()

    def kill(self) -> None:
        """SIGKILL to the server's process group (gunicorn's master and its workers): a crash."""
        if self._stack is not None:
            os.killpg(self._process.pid, signal.SIGKILL)
            self.terminate()

    def stop(self) -> None:
        """Terminate, then wait until the process's database sessions are gone."""
        self.terminate()
        self.wait_released()

    def wait_released(self) -> None:
        deadline = time.monotonic() + 10
        while self._sessions() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _sessions(self) -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [self.application_name])
            return cursor.fetchone()[0]

    def socket_url(self, project_id, file_id: int) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/projects/{project_id}/documents/{file_id}"

    def api(self, user) -> requests.Session:
        session = requests.Session()
        session.headers["Authorization"] = f"Bearer {bearer_token_for(user)}"
        return session

    def file_url(self, project, path: str = "main.tex") -> str:
        return f"{self.url}/v1/projects/{project.pk}/files/{path}"


def served(django_db_blocker, tmp_path_factory, name: str, env: dict[str, str] | None = None):
    """A module fixture's body: yield a running ``LiveServer``, stop it afterwards."""
    server = LiveServer(tmp_path_factory.mktemp(name), env)
    with django_db_blocker.unblock():
        server.start()
        try:
            yield server
        finally:
            server.stop()


def run(coroutine):
    """``asyncio.run`` for a test's socket code. Django keeps a database connection per asyncio context, so
    the event loop's own is opened first (the tasks it starts share it) and closed at the end: none is left
    open for the test database's teardown to trip over."""

    async def main():
        connection.ensure_connection()
        try:
            return await coroutine
        finally:
            connection.close()

    return asyncio.run(main())


# --- clients -----------------------------------------------------------------------------------------------


@dataclass
class Editor(LiveClient):
    """``LiveClient`` with two test seams, neither of which changes what it sends or how it reads:

    - ``hooks``: called with ``(client, frame)`` right after each frame from the server was handled, before the
      next one is read (so a hook sees the database as it was when the frame arrived);
    - ``holding``: while true, frames the editor would send are kept back (an editor whose keystroke is still
      on its way); ``release`` sends them in order.
    """

    hooks: list = field(default_factory=list)
    holding: bool = False
    held: list[bytes] = field(default_factory=list)

    async def open(self) -> "Editor":
        try:
            return await super().open()
        except ConnectionClosed:
            # The server accepted and closed at once (a connection limit) before ``open`` sent its sync step 1:
            # ``LiveClient.open`` raises then, without reading the close. Read it as the client would have.
            self._reader = asyncio.get_running_loop().create_task(self._read())
            return self

    async def send(self, frame: bytes) -> None:
        if self.holding:
            self.held.append(frame)
            return
        await super().send(frame)

    async def release(self) -> None:
        self.holding = False
        held, self.held = self.held, []
        for frame in held:
            await super().send(frame)

    async def _handle(self, frame: bytes) -> None:
        await super()._handle(frame)
        for hook in self.hooks:
            hook(self, frame)

    async def raw(self, frame: bytes | str) -> None:
        """Send a frame exactly as given (bytes or a text frame), bypassing nothing but the editor's encoding."""
        await self._socket.send(frame)


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


def file_id_of(project, path: str = "main.tex") -> int:
    return ProjectFile.objects.get(project_id=project.pk, path=path).pk


async def connect(
    server: LiveServer,
    user,
    project,
    *,
    file_id: int | None = None,
    doc: Doc | None = None,
    cookie: str | None = None,
    origin: str | None = None,
    synced: bool = True,
    timeout: float = 10.0,
) -> Editor:
    """Open an editor's socket as ``user`` (``user=None``: no session) and wait until it has the server's state."""
    file_id = file_id_of(project) if file_id is None else file_id
    if cookie is None:
        cookie = session_cookie(user) if user is not None else ""
    extra = {"doc": doc} if doc is not None else {}
    client = Editor(server.socket_url(project.pk, file_id), cookie, origin or server.origin, **extra)
    await client.open()
    if synced:
        await asyncio.wait_for(client.synced.wait(), timeout)
    return client


async def refusal_of_handshake(server: LiveServer, user, project, **options) -> InvalidStatus:
    """The ``InvalidStatus`` a refused handshake raises (fails the test if the socket opens)."""
    try:
        client = await connect(server, user, project, synced=False, **options)
    except InvalidStatus as refused:
        return refused
    await client.close()
    raise AssertionError(f"the handshake succeeded for {options or user}")


async def close_all(*clients: LiveClient) -> None:
    for client in clients:
        if client is not None and client.closed is None:
            await client.close()


# --- the database's view ---------------------------------------------------------------------------------


def state_vector(encoded: bytes) -> dict[int, int]:
    reader = protocol.Reader(encoded)
    count = reader.var_uint()
    vector = {}
    for _ in range(count):
        client = reader.var_uint()
        vector[client] = reader.var_uint()
    reader.end()
    return vector


def stored_vector(file_id: int) -> dict[int, int]:
    """The state vector of everything in the document's log in the database now (committed rows only)."""
    log = DocumentLog.objects.filter(file_id=file_id).first()
    if log is None:
        return {}
    return state_vector(log_doc(log).get_state())


def covers(outer: dict[int, int], inner: dict[int, int]) -> bool:
    return all(outer.get(client, 0) >= clock for client, clock in inner.items())


def own_clock(client: LiveClient) -> int:
    return state_vector(client.doc.get_state()).get(client.doc.client_id, 0)


def stored_text(file_id: int) -> str:
    return services.projection_read(file_id=file_id)


def update_rows(file_id: int) -> int:
    return AcceptedUpdate.objects.filter(log__file_id=file_id).count()


def workspace_row(file_id: int) -> ProjectFile:
    return ProjectFile.objects.get(pk=file_id)


def workspace_row_text(file_id: int) -> str:
    """The text Workspace's row holds now, as it is (a GET through the API would project pending edits first)."""
    return workspace.document_text_read(sha256=workspace_row(file_id).sha256)


async def eventually(condition, *, timeout: float = 10.0, what: str = "condition"):
    """Poll ``condition`` (a database read, say) inside the event loop until it is truthy."""
    deadline = time.monotonic() + timeout
    while True:
        if result := condition():
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def crafted_update(client: LiveClient, edit) -> bytes:
    """An update holding ``edit(text)`` made on a copy of the client's document (the client's own document is
    unchanged: the update is crafted, as a modified editor would send it)."""
    copy = Doc(client_id=client.doc.client_id)
    copy.apply_update(client.doc.get_update())
    text = copy.get("content", type=type(client.doc["content"]))
    before = copy.get_state()
    edit(text)
    return copy.get_update(before)


def payload(frame: bytes) -> bytes:
    """The var-bytes field after a frame's message type (an ACKNOWLEDGED's state vector, say)."""
    reader = protocol.Reader(frame)
    reader.var_uint()
    return reader.var_bytes()
