"""The server process's one conversion host, on an event loop of its own.

Callers come from everywhere: async views on uvicorn's loop, sync views and
signal receivers on worker threads, ``runserver`` and the test client with a
fresh loop per request. So the host lives on a dedicated loop in a daemon
thread and callers cross over with ``run_coroutine_threadsafe``; a caller's
cancellation (a client that disconnected) crosses too and cancels its reader.
"""

import asyncio
import atexit
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass

from office.engine import Engine
from office.host import Host, HostLimits, Preview, Priority, SourceRead, SourceRef

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HostSnapshot:
    queued_foreground: int
    queued_background: int
    running: int
    readers: int
    reserved_bytes: int
    cache_entries: int
    cache_bytes: int
    cache_hits: int
    cache_misses: int
    outcomes: dict[str, int]
    generation: int


class HostRuntime:
    def __init__(self, *, engine_factory: Callable[[], Engine], limits: HostLimits, background_enabled: bool):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="office-host", daemon=True)
        self._thread.start()
        self.host: Host = self.call(self._build(engine_factory, limits, background_enabled))
        self.reads = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="office-read")

    async def _build(self, engine_factory, limits: HostLimits, background_enabled: bool) -> Host:
        engine = engine_factory()
        if hasattr(engine, "warm"):
            engine.warm()
        return Host(engine=engine, limits=limits, background_enabled=background_enabled)

    @property
    def engine(self) -> Engine:
        return self.host.engine

    async def convert(self, *, source: SourceRef, read: SourceRead, priority: Priority) -> Preview:
        """From any event loop: the host's answer; cancelling the caller cancels only its reader."""
        return await self.run(self.host.convert(source=source, read=read, priority=priority))

    async def run[T](self, coroutine: Coroutine[object, object, T]) -> T:
        """Await ``coroutine`` on the host's loop from any other loop; cancellation crosses over."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self._loop))

    def call[T](self, coroutine: Coroutine[object, object, T], timeout: float = 60) -> T:
        """Run ``coroutine`` on the host's loop and wait for it from synchronous code."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def submit(self, *, source: SourceRef, read: SourceRead, priority: Priority) -> concurrent.futures.Future:
        """From synchronous code: start a reader and return at once (a prewarm)."""
        return asyncio.run_coroutine_threadsafe(
            self.host.convert(source=source, read=read, priority=priority), self._loop
        )

    def background_set(self, enabled: bool) -> None:
        """Applied on the host's loop before any reader submitted after this call."""
        self._loop.call_soon_threadsafe(setattr, self.host, "background_enabled", enabled)

    def snapshot(self) -> HostSnapshot:
        return self.call(self.snapshot_on_loop(), timeout=5)

    async def snapshot_on_loop(self) -> HostSnapshot:
        """The figures, from a coroutine already running on the host's loop."""
        host = self.host
        return HostSnapshot(
            queued_foreground=host.queued(Priority.FOREGROUND),
            queued_background=host.queued(Priority.BACKGROUND),
            running=host.running,
            readers=host.readers,
            reserved_bytes=host.reserved_bytes,
            cache_entries=len(host.cache),
            cache_bytes=host.cache.bytes,
            cache_hits=host.stats.cache_hits,
            cache_misses=host.stats.cache_misses,
            outcomes=dict(host.stats.outcomes),
            generation=host.engine.generation,
        )

    def close(self) -> None:
        """Stop the converters, end every task on the host's loop, then the loop itself."""
        if self._loop.is_closed():
            return
        try:
            self.call(self._shutdown(), timeout=20)
        except Exception:
            logger.exception("office host did not shut down cleanly")
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self.reads.shutdown(wait=False, cancel_futures=True)
        if not self._thread.is_alive():
            self._loop.close()

    async def _shutdown(self) -> None:
        await self.host.engine.close()
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


_lock = threading.Lock()
_current: list[HostRuntime] = []  # at most one: this process's runtime


def host_runtime(factory: Callable[[], HostRuntime]) -> HostRuntime:
    """This process's runtime, made by ``factory`` on first use."""
    with _lock:
        if not _current:
            runtime = factory()
            atexit.register(runtime.close)
            _current.append(runtime)
        return _current[0]


def host_runtime_current() -> HostRuntime | None:
    with _lock:
        return _current[0] if _current else None


def host_runtime_replace(runtime: HostRuntime | None) -> HostRuntime | None:
    """Swap this process's runtime (tests install one on a fake engine); returns the previous one."""
    with _lock:
        previous = _current.pop() if _current else None
        if runtime is not None:
            _current.append(runtime)
        return previous
