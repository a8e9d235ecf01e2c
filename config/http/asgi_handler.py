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

Django's handler also crosses into that thread to send ``request_started``, and
again after the response is sent to close it (``request_finished``, which hands
the database connection back). Here one crossing does all three for a response
whose body is already in memory: its close cannot affect the bytes sent, so it
runs before they are sent. A streamed response is still closed after sending.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import ImproperlyConfigured, RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.exception import convert_exception_to_response
from django.http import FileResponse, HttpResponse
from django.urls import set_script_prefix, set_urlconf
from django.utils.log import log_response
from django.utils.module_loading import import_string

from config.http.edge_threads import EdgeThreads

# Idle executors kept beyond this many are shut down: a burst of long-polls leaves no thread army behind.
KEEP_IDLE_EXECUTORS = 64


class _RequestProcessed(Exception):
    """Ends the request's task group once the response is sent (which stops the disconnect listener)."""


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
    """``middleware`` and ``urlconf`` (both default to the settings') let one handler serve one part of the site
    with a chain and URL list of its own: see ``by_path_prefix``."""

    def __init__(self, *, middleware: list[str] | None = None, urlconf: str | None = None):
        self.middleware = middleware
        self.urlconf = urlconf
        super().__init__()
        self.executors = ExecutorShelf()

    def load_middleware(self, is_async: bool = False) -> None:
        if self.middleware is None:
            super().load_middleware(is_async=False)
        else:
            self._middleware_chain_build(self.middleware)
        self._serve_in_thread = sync_to_async(self._serve, thread_sensitive=True)

    def _middleware_chain_build(self, paths: list[str]) -> None:
        """Django's ``load_middleware`` for a given list of synchronous middlewares without view, exception or
        template-response hooks (refused here rather than silently skipped)."""
        self._view_middleware, self._template_response_middleware, self._exception_middleware = [], [], []
        handler = convert_exception_to_response(self._get_response)
        for path in reversed(paths):
            middleware = import_string(path)(handler)
            hooks = [hook for hook in ("process_view", "process_exception", "process_template_response")
                     if hasattr(middleware, hook)]  # fmt: skip
            if hooks:
                raise ImproperlyConfigured(f"{path} has {hooks}, which this handler's chain does not run.")
            handler = convert_exception_to_response(middleware)
        self._middleware_chain = handler

    def _serve(self, scope, body_file):
        """Everything a request does on its thread: started signal, request, chain, and (unless streamed) close."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            set_urlconf(settings.ROOT_URLCONF)
            if self.urlconf:
                request.urlconf = self.urlconf  # Django resolves against it, and takes its 404 handler from it
            response = self._middleware_chain(request)
            response._resource_closers.append(request.close)
            response._handler_class = self.__class__
            if response.status_code >= 400:
                log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size  # the ASGI server does its own chunking
        if not response.streaming:
            response.close()
        return response

    async def _body_for(self, scope, receive):
        """The request's body (None if the client left while sending it), with the script prefix set."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return None
        set_script_prefix(get_script_prefix(scope))
        return body_file

    async def handle(self, scope, receive, send):
        """Django's ``ASGIHandler.handle`` with the request's synchronous work in one crossing (``_serve``)."""
        body_file = await self._body_for(scope, receive)
        if body_file is None:
            return
        with closing(body_file):
            response = None
            try:
                try:
                    async with asyncio.TaskGroup() as tasks:
                        tasks.create_task(self.listen_for_disconnect(receive))
                        response = await self._serve_in_thread(scope, body_file)
                        await self.send_response(response, send)
                        raise _RequestProcessed
                except* (_RequestProcessed, RequestAborted):
                    pass
            except BaseExceptionGroup as group:
                if len(group.exceptions) == 1:
                    raise group.exceptions[0]  # noqa: B904  as Django's handler does
                raise
            if response is None:  # the client left before the answer; as Django does, the request is finished
                await signals.request_finished.asend(sender=self.__class__)
            elif response.streaming:
                await sync_to_async(response.close)()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor = self.executors.take()
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        finally:
            self.executors.give_back(executor)


class InMemoryEdgeHandler(SyncChainASGIHandler):
    """For routes whose answers are in memory and whose clients wait for them (the worker protocol): each
    request is one call on the edge's shared threads (``EdgeThreads``), without a thread context of its own or a
    disconnect listener.

    A request's thread context exists so that its several crossings into threads use one thread (its database
    connection, a streamed response's close); here a request crosses once, and its connection goes back to the
    pool before the answer is sent. A client that leaves early changes nothing either way: a thread cannot be
    stopped, and the server drops an answer for a closed connection. Together these were a tenth of a server
    process's time in a worker-protocol drain. ``threads`` bounds the requests in progress at once (an idle
    acquire holds one for its long poll); threads start only as requests need them.
    """

    def __init__(self, *, threads: int = 512, **kwargs):
        super().__init__(**kwargs)
        self.threads = EdgeThreads(limit=threads, name="edge")

    def _serve_in_memory(self, scope, body_file):
        response = self._serve(scope, body_file)
        if response.streaming:  # closed on this thread, as the request's connection must be
            with closing(response):
                content = b"".join(response.streaming_content)
            response = HttpResponse(content, status=response.status_code, headers=response.headers)
        return response

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        body_file = await self._body_for(scope, receive)
        if body_file is None:
            return
        with closing(body_file):
            response = await self.threads.run(self._serve_in_memory, scope, body_file)
            await self.send_response(response, send)


def by_path_prefix(prefix: str, edge, rest):
    """An ASGI app sending HTTP requests under ``prefix`` to ``edge`` and everything else to ``rest``."""

    async def route(scope, receive, send):
        app = edge if scope["type"] == "http" and scope["path"].startswith(prefix) else rest
        await app(scope, receive, send)

    return route
