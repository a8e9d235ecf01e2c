"""The Office conversion host (seed 004, docs/architecture.md §12): one per machine, asyncio inside.

The machine's server processes reach it through ``office/host_service.py``; without that service configured,
each server process keeps one of its own.

A reader arrives with **authorized** source metadata (project, path, version,
size) and a deferred ``read`` callback; no bytes are read at admission. Its way:

1. A ready PDF for that source version (version index → digest → LRU) is a hit.
2. Otherwise it joins live work for the same content or source version, or a
   new job is queued — within the reader, queue and per-source byte limits.
3. A queued job starts when a conversion permit and its byte reservation are
   free: foreground first, FIFO within a priority, background never taking the
   last permit. It reads the source within the reservation, refuses a changed
   version, hashes the bytes and then either serves a ready PDF, merges its
   readers into a running job with the same identity (sha256 + extension +
   converter generation), or converts.

Priority follows the live readers. A reader's cancellation detaches only that
reader; the last one's cancels the job, whose permit and bytes come back only
after its read or conversion has settled.
"""

import asyncio
import hashlib
import itertools
import logging
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import IntEnum, StrEnum

from office.cache import Identity, PdfCache, SourceIndex, SourceKey
from office.engine import Engine, office_extension_require
from office.exceptions import (
    BackgroundDisabled,
    ConversionFailed,
    ConverterUnavailable,
    OfficeBusy,
    OfficeError,
    SourceChanged,
    SourceTooLarge,
    SpeculationEvicted,
)
from office.settle import in_thread, settle

logger = logging.getLogger(__name__)
MiB = 1024 * 1024


class Priority(IntEnum):
    FOREGROUND = 0  # a person is waiting: preview, explicit inspection
    BACKGROUND = 1  # speculation: prewarm after an upload


@dataclass(frozen=True)
class HostLimits:
    max_running: int = 2
    max_readers: int = 256
    max_queued: int = 64
    max_input_bytes: int = 64 * MiB  # one source; also the reservation for an unknown size
    max_source_bytes: int = 256 * MiB  # reserved by running jobs together
    index_entries: int = 4096
    cache_entries: int = 128
    cache_bytes: int = 256 * MiB
    cache_entry_bytes: int = 32 * MiB  # larger PDFs are returned but not retained

    def __post_init__(self):
        if self.max_running < 1 or self.max_source_bytes < self.max_input_bytes:
            raise ValueError("office host limits: need a running slot and room for one full-size source")

    @property
    def max_running_background(self) -> int:
        """Speculation leaves one permit for people whenever there are two or more."""
        return max(1, self.max_running - 1)


@dataclass(frozen=True)
class SourceRef:
    """Authorized metadata of a source; ``version`` is the sha256 the caller was shown."""

    project_id: uuid.UUID
    path: str
    version: str
    size_bytes: int | None

    @property
    def key(self) -> SourceKey:
        return (self.project_id, self.path, self.version)


# read(max_bytes) -> (bytes, version actually read); when cancelled it returns only once the read has ended.
type SourceRead = Callable[[int], Awaitable[tuple[bytes, str]]]


@dataclass(frozen=True)
class Preview:
    pdf: bytes
    page_count: int
    source_sha256: str
    generation: int
    cache_hit: bool


class JobState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    ABANDONED = "abandoned"  # its last reader left; its task is settling
    SETTLED = "settled"


@dataclass(eq=False)
class Reader:
    priority: Priority
    read: SourceRead
    future: asyncio.Future
    job: "Job | None" = None


@dataclass(eq=False)
class Job:
    seq: int
    source: SourceRef
    extension: str
    reserve_bytes: int
    readers: list[Reader] = field(default_factory=list)
    state: JobState = JobState.QUEUED
    admitted_as: Priority | None = None
    identity: Identity | None = None
    task: asyncio.Task | None = None

    @property
    def priority(self) -> Priority:
        return min((reader.priority for reader in self.readers), default=Priority.BACKGROUND)


@dataclass
class HostStats:
    cache_hits: int = 0
    cache_misses: int = 0
    outcomes: Counter = field(default_factory=Counter)  # conversions by outcome


class Host:
    def __init__(self, *, engine: Engine, limits: HostLimits, background_enabled: bool = True):
        self.engine = engine
        self.limits = limits
        self.background_enabled = background_enabled
        self.index = SourceIndex(max_entries=limits.index_entries)
        self.cache = PdfCache(
            max_entries=limits.cache_entries,
            max_bytes=limits.cache_bytes,
            max_entry_bytes=limits.cache_entry_bytes,
        )
        self.stats = HostStats()
        self.readers = 0
        self.running = 0
        self.running_background = 0  # jobs admitted as speculation, counted until they settle
        self.reserved_bytes = 0
        self._queue: list[Job] = []
        self._by_source: dict[SourceKey, Job] = {}  # queued or reading, not yet hashed
        self._by_identity: dict[Identity, Job] = {}  # hashed and converting
        self._seq = itertools.count()
        self._idle_waiters: list[asyncio.Future] = []

    # -- readers -------------------------------------------------------------------------------

    async def convert(self, *, source: SourceRef, read: SourceRead, priority: Priority) -> Preview:
        """The PDF of ``source``; raises an OfficeError subclass when it cannot be had."""
        extension = office_extension_require(source.path)
        if source.size_bytes is not None and source.size_bytes > self.limits.max_input_bytes:
            raise SourceTooLarge(details={"limit_bytes": self.limits.max_input_bytes})
        if (hit := self._cache_hit(source, extension)) is not None:
            return hit
        if priority is Priority.BACKGROUND and not self.background_enabled:
            raise BackgroundDisabled()
        reader = self._admit(source, extension, read, priority)
        try:
            return await reader.future
        finally:
            self.readers -= 1
            self._leave(reader)

    @property
    def converting(self) -> int:
        """Jobs whose bytes are with the engine now."""
        return len(self._by_identity)

    def queued(self, priority: Priority) -> int:
        return sum(1 for job in self._queue if job.priority is priority)

    async def idle(self) -> None:
        """Return once nothing is queued or running (for shutdown and tests)."""
        while self._queue or self.running:
            waiter = asyncio.get_running_loop().create_future()
            self._idle_waiters.append(waiter)
            await waiter

    def _cache_hit(self, source: SourceRef, extension: str) -> Preview | None:
        digest = self.index.get(source.key)
        if digest is None:
            return None
        generation = self.engine.generation
        cached = self.cache.get((digest, extension, generation))
        if cached is None:
            return None
        self.stats.cache_hits += 1
        return Preview(cached.pdf, cached.page_count, digest, generation, cache_hit=True)

    def _admit(self, source: SourceRef, extension: str, read: SourceRead, priority: Priority) -> Reader:
        if self.readers >= self.limits.max_readers:
            raise OfficeBusy(details={"limit": "readers"})
        job = self._joinable(source, extension) or self._enqueue(source, extension, priority)
        reader = Reader(priority, read, asyncio.get_running_loop().create_future(), job)
        job.readers.append(reader)
        self.readers += 1
        self.stats.cache_misses += 1
        self._pump()
        return reader

    def _joinable(self, source: SourceRef, extension: str) -> Job | None:
        digest = self.index.get(source.key)
        if digest is not None:
            job = self._by_identity.get((digest, extension, self.engine.generation))
            if job is not None:
                return job
        return self._by_source.get(source.key)

    def _enqueue(self, source: SourceRef, extension: str, priority: Priority) -> Job:
        if len(self._queue) >= self.limits.max_queued:
            if priority is Priority.BACKGROUND:
                raise OfficeBusy(details={"limit": "queue"})
            self._evict_speculation()
        size = source.size_bytes
        job = Job(next(self._seq), source, extension, self.limits.max_input_bytes if size is None else size)
        self._queue.append(job)
        self._by_source[source.key] = job
        return job

    def _evict_speculation(self) -> None:
        """Make a queue place for a person by failing the newest queued job nobody is waiting for."""
        speculative = [job for job in self._queue if job.priority is Priority.BACKGROUND]
        if not speculative:
            raise OfficeBusy(details={"limit": "queue"})
        victim = max(speculative, key=lambda job: job.seq)
        self._queue.remove(victim)
        self._finish(victim, SpeculationEvicted())

    def _leave(self, reader: Reader) -> None:
        """Detach a reader that stopped waiting; the last one out stops its job."""
        job, reader.job = reader.job, None
        if job is None:
            return
        job.readers.remove(reader)
        if not job.readers:
            if job.state is JobState.QUEUED:
                self._queue.remove(job)
                self._forget(job)
                job.state = JobState.SETTLED
            elif job.state is JobState.RUNNING:
                job.state = JobState.ABANDONED
                self._forget(job)
                job.task.cancel()
        self._pump()  # a removed or demoted job may unblock eligible work

    # -- scheduling ------------------------------------------------------------------------------

    def _pump(self) -> None:
        while self._queue:
            job = min(self._queue, key=lambda queued: (queued.priority, queued.seq))
            if not self._fits(job):
                return
            self._queue.remove(job)
            self._start(job)

    def _fits(self, job: Job) -> bool:
        if self.running >= self.limits.max_running:
            return False
        speculative = job.priority is Priority.BACKGROUND
        if speculative and self.running_background >= self.limits.max_running_background:
            return False
        return self.reserved_bytes + job.reserve_bytes <= self.limits.max_source_bytes

    def _start(self, job: Job) -> None:
        job.state, job.admitted_as = JobState.RUNNING, job.priority
        self.running += 1
        self.running_background += int(job.admitted_as is Priority.BACKGROUND)
        self.reserved_bytes += job.reserve_bytes
        job.task = asyncio.get_running_loop().create_task(self._run(job), name=f"office-job-{job.seq}")

    async def _run(self, job: Job) -> None:
        try:
            await self._execute(job)
        except asyncio.CancelledError:
            self.stats.outcomes["cancelled"] += 1
            self._finish(job, ConverterUnavailable())  # only readers left by a host shutdown remain
        except OfficeError as exc:
            self._finish(job, exc)
        except Exception as exc:
            logger.exception("office conversion failed unexpectedly", extra={"extension": job.extension})
            self._finish(job, ConversionFailed(details={"reason": type(exc).__name__}))
        finally:
            self.running -= 1
            self.running_background -= int(job.admitted_as is Priority.BACKGROUND)
            self.reserved_bytes -= job.reserve_bytes
            job.state = JobState.SETTLED
            self._pump()
            waiters, self._idle_waiters = self._idle_waiters, []
            for waiter in waiters:
                if not waiter.done():
                    waiter.set_result(None)

    async def _execute(self, job: Job) -> None:
        data = await self._read(job)
        digest = await in_thread(_sha256, data)
        identity = job.identity = (digest, job.extension, self.engine.generation)
        if self._by_source.get(job.source.key) is job:
            del self._by_source[job.source.key]
        self.index.put(job.source.key, digest)  # published only for the version actually read
        if (cached := self.cache.get(identity)) is not None:
            self._finish(job, (cached.pdf, cached.page_count), cache_hit=True)
            return
        if (running := self._by_identity.get(identity)) is not None:
            self._merge(job, into=running)
            return
        self._by_identity[identity] = job
        conversion = await settle(self.engine.convert(source=data, extension=job.extension))
        self.cache.put(identity, conversion.pdf, conversion.page_count)
        self.stats.outcomes["succeeded"] += 1
        self._finish(job, (conversion.pdf, conversion.page_count))

    async def _read(self, job: Job) -> bytes:
        """Read through a live reader's callback within the reservation; a changed source fails."""
        data, version = await settle(job.readers[0].read(job.reserve_bytes))
        if version != job.source.version:
            raise SourceChanged(details={"path": job.source.path})
        if len(data) > job.reserve_bytes:
            raise SourceTooLarge(details={"limit_bytes": job.reserve_bytes})
        return data

    def _merge(self, job: Job, *, into: Job) -> None:
        for reader in job.readers:
            reader.job = into
            into.readers.append(reader)
        job.readers.clear()

    def _finish(self, job: Job, outcome: tuple[bytes, int] | OfficeError, *, cache_hit: bool = False) -> None:
        """Hand every attached reader its own copy of the PDF, or its own copy of the error."""
        self._forget(job)
        readers, job.readers = job.readers, []
        if isinstance(outcome, OfficeError) and readers:
            self.stats.outcomes[outcome.code.removeprefix("office_")] += 1
        for reader in readers:
            reader.job = None
            if reader.future.done():
                continue
            if isinstance(outcome, OfficeError):
                reader.future.set_exception(type(outcome)(outcome.message, details=outcome.details))
            else:
                pdf, page_count = outcome
                digest, _, generation = job.identity
                copy = bytes(memoryview(pdf))
                reader.future.set_result(Preview(copy, page_count, digest, generation, cache_hit))

    def _forget(self, job: Job) -> None:
        if self._by_source.get(job.source.key) is job:
            del self._by_source[job.source.key]
        if job.identity is not None and self._by_identity.get(job.identity) is job:
            del self._by_identity[job.identity]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
