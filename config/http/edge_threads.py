"""Threads that run an event loop's synchronous calls: one queue in, one wake-up of the loop out.

``loop.run_in_executor`` with a ``ThreadPoolExecutor`` builds a concurrent future, a work item and
an asyncio future chained to it for every call, and on this Python (3.12) its idle-thread count
misses a thread whenever a finishing thread takes the next queued call before going idle: under a
steady stream of requests it starts new threads until it reaches its limit (hundreds during a
worker-protocol drain). Here a thread counts itself waiting before it sends an answer (so the
caller's next call finds it), and a call starts a thread only when more calls are queued than
threads wait for them: the threads are never more than the most calls in progress at once. Each
call costs one queue put, one loop future and one ``call_soon_threadsafe``.
"""

import asyncio
import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable


def _settle(future: asyncio.Future, result, error: BaseException | None) -> None:
    if future.cancelled():  # the awaiting task went away; nobody is left to take the answer
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class EdgeThreads:
    """At most ``limit`` threads, started only as calls need them, kept for the next ones."""

    def __init__(self, *, limit: int, name: str = "edge"):
        self._calls: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._limit, self._name = limit, name
        self._started = self._waiting = self._queued = 0

    @property
    def started(self) -> int:
        return self._started

    def run(self, function: Callable, *args) -> asyncio.Future:
        """Call ``function(*args)`` on one of the threads in the caller's context; await the result."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            self._queued += 1
            start = self._queued > self._waiting and self._started < self._limit
            if start:
                self._started += 1
        self._calls.put((loop, future, contextvars.copy_context(), function, args))
        if start:
            threading.Thread(target=self._serve, name=f"{self._name}-{self._started}", daemon=True).start()
        return future

    def _serve(self) -> None:
        with self._lock:
            self._waiting += 1
        while True:
            loop, future, context, function, args = self._calls.get()
            with self._lock:
                self._waiting -= 1
                self._queued -= 1
            result, error = None, None
            try:
                result = context.run(function, *args)
            except BaseException as exc:  # handed to the awaiting task, which raises it
                error = exc
            # Counted as waiting before the answer goes out: the caller's next call must find this thread.
            with self._lock:
                self._waiting += 1
            with contextlib.suppress(RuntimeError):  # a closed loop (the server stopped) awaits no answer
                loop.call_soon_threadsafe(_settle, future, result, error)
            del loop, future, context, function, args, result, error
