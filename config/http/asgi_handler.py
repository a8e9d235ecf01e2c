"""Django's ASGI handler with the middleware chain run as one synchronous call, on a reused thread.

Under ASGI Django builds an asynchronous middleware chain, and every
``MiddlewareMixin`` middleware then crosses into a thread twice per request
(``process_request`` and ``process_response``): with our ten middlewares and a
sync view that is some thirty thread hops, about 4 ms a request on these
machines, against 0.5 ms for the work itself. All our middlewares and views are
synchronous, so the chain is built synchronously and crosses into its thread
once. ``thread_sensitive`` keeps that thread the one the request's signals and
database connection use.

Django gives each request a ``ThreadSensitiveContext`` of its own, which starts a
thread for the request and joins it at the end: a tenth of a server process's
time during a worker-protocol drain. Here each request's context runs on a
one-thread executor taken from a shelf and put back afterwards (asgiref lets the
caller own a context's executor), so threads are started only when more requests
run at once than ever before.
"""

from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.handlers.asgi import ASGIHandler

# Idle executors kept beyond this many are shut down: a burst of long-polls leaves no thread army behind.
KEEP_IDLE_EXECUTORS = 64


class ExecutorShelf:
    """One-thread executors between requests. Used from the event loop's thread only, so a list suffices."""

    def __init__(self, keep: int = KEEP_IDLE_EXECUTORS):
        self._idle: list[ThreadPoolExecutor] = []
        self._keep = keep

    def take(self) -> ThreadPoolExecutor:
        return self._idle.pop() if self._idle else ThreadPoolExecutor(max_workers=1, thread_name_prefix="request")

    def give_back(self, executor: ThreadPoolExecutor) -> None:
        if len(self._idle) < self._keep:
            self._idle.append(executor)
        else:
            executor.shutdown(wait=False)

    @property
    def idle(self) -> int:
        return len(self._idle)


class SyncChainASGIHandler(ASGIHandler):
    def __init__(self):
        super().__init__()
        self.executors = ExecutorShelf()

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        self._middleware_chain = sync_to_async(self._middleware_chain, thread_sensitive=True)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor = self.executors.take()
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            self.executors.give_back(executor)
