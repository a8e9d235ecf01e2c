"""Controllable stand-ins for the engine and the workspace read, with completion points a test resolves."""

import asyncio
import hashlib
import uuid
from dataclasses import dataclass, field

from office.engine import Conversion
from office.host import Host, HostLimits, Priority, SourceRef


@dataclass(eq=False)
class FakeConversion:
    source: bytes
    extension: str
    result: asyncio.Future
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    cleanup_done: asyncio.Event = field(default_factory=asyncio.Event)

    def finish(self, pdf: bytes = b"%PDF-fake", page_count: int = 1) -> None:
        self.result.set_result(Conversion(pdf, page_count))

    def fail(self, error: Exception) -> None:
        self.result.set_exception(error)


class FakeEngine:
    """Each convert() waits until the test finishes it; a cancelled one holds until ``cleanup_done``."""

    def __init__(self, *, hold_cleanup: bool = False):
        self.generation = 1
        self.calls: list[FakeConversion] = []
        self.hold_cleanup = hold_cleanup
        self._changed = asyncio.Condition()

    async def convert(self, *, source: bytes, extension: str) -> Conversion:
        call = FakeConversion(source, extension, asyncio.get_running_loop().create_future())
        if not self.hold_cleanup:
            call.cleanup_done.set()
        self.calls.append(call)
        async with self._changed:
            self._changed.notify_all()
        try:
            return await call.result
        except asyncio.CancelledError:
            call.cancelled.set()
            await call.cleanup_done.wait()
            raise

    async def call(self, number: int) -> FakeConversion:
        """The ``number``-th conversion (1-based), once it has started."""
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.calls) >= number)
        return self.calls[number - 1]

    async def close(self) -> None:
        return None


@dataclass
class FakeFile:
    data: bytes
    version: str
    reads: int = 0
    gate: asyncio.Event | None = None  # when given, a read waits for it
    read_started: asyncio.Event = field(default_factory=asyncio.Event)
    read_cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    read_cleanup: asyncio.Event | None = None  # when given, a cancelled read ends only once it is set


class FakeWorkspace:
    """Files by path; ``source(path)`` is the authorized metadata, ``reader(path)`` its deferred read."""

    project_id = uuid.UUID(int=1)

    def __init__(self):
        self.files: dict[str, FakeFile] = {}

    def put(self, path: str, data: bytes) -> FakeFile:
        self.files[path] = FakeFile(data, hashlib.sha256(data).hexdigest())
        return self.files[path]

    def source(self, path: str, *, size_known: bool = True) -> SourceRef:
        file = self.files[path]
        return SourceRef(self.project_id, path, file.version, len(file.data) if size_known else None)

    def reader(self, path: str):
        async def read(max_bytes: int) -> tuple[bytes, str]:
            file = self.files[path]
            file.reads += 1
            file.read_started.set()
            try:
                if file.gate is not None:
                    await file.gate.wait()
            except asyncio.CancelledError:
                file.read_cancelled.set()
                if file.read_cleanup is not None:
                    await file.read_cleanup.wait()
                raise
            return file.data, file.version

        return read


class Harness:
    """A host on a fake engine and fake workspace, with a shortcut to start readers as tasks."""

    def __init__(self, *, hold_cleanup: bool = False, **limits):
        self.engine = FakeEngine(hold_cleanup=hold_cleanup)
        self.workspace = FakeWorkspace()
        self.host = Host(engine=self.engine, limits=HostLimits(**limits))

    def start(self, path: str, priority: Priority = Priority.FOREGROUND, **source) -> asyncio.Task:
        return asyncio.create_task(self.convert(path, priority, **source))

    async def convert(self, path: str, priority: Priority = Priority.FOREGROUND, **source):
        return await self.host.convert(
            source=self.workspace.source(path, **source), read=self.workspace.reader(path), priority=priority
        )


async def until(condition) -> None:
    """Let the loop run until ``condition()`` holds (the scenario's timeout bounds it); no clock involved."""
    while not condition():
        await asyncio.sleep(0)


def run(scenario, timeout: float = 10.0):
    """Run an async test body on a fresh loop; a deadlock fails the test instead of hanging it."""
    return asyncio.run(asyncio.wait_for(scenario, timeout))


class InstantEngine:
    """Converts at once: the PDF names the source bytes, so a test can tell which file it came from."""

    def __init__(self):
        self.generation = 1
        self.sources: list[bytes] = []
        self.failure: Exception | None = None

    async def convert(self, *, source: bytes, extension: str) -> Conversion:
        self.sources.append(source)
        if self.failure is not None:
            raise self.failure
        return Conversion(b"%PDF-1.7 " + source, 2)

    async def close(self) -> None:
        return None
