"""Django's ASGI handler with the middleware chain run as one synchronous call.

Written against Django 6.1.3 and asgiref 3.13.0. ``tests/config/test_asgi_handler.py`` pins the source of the
Django internals this copies (``ASGIHandler.handle``, ``BaseHandler.get_response``, ``run_get_response``'s
fix-ups) or calls (``read_body``, ``create_request``, ``send_response``, ``listen_for_disconnect``) and compares
this handler's answers with the stock handler's on a set of requests: an upgrade that changes one fails there.

What it earns (measured back to back in one session on a 2-core machine, 1,000 echo jobs,
3 repetitions an arm, two sessions of arms): the worker-protocol drain over HTTP with two agents
(``drain_jobs_per_s_http_2_agents``) was 71 and 84 jobs/s with this handler against 41 and 39 with Django's
stock ``ASGIHandler``; the whole machine's CPU per job 28 / 23 ms against 47 / 51 ms. Reproduce with the HTTP
parts of ``make bench-queue`` and ``QUIRE_ASGI_HANDLER=stock make bench-queue`` (the switch is read by
``config/asgi.py``). Serving the same requests through Django's WSGI handler on gunicorn's gthread workers
(``BENCH_WEB_SERVER=wsgi``, scripts/bench/processes.py) measured the same as this handler (73 jobs/s): the gain
is over Django's *ASGI* path only, and serving plain HTTP through WSGI (ASGI for WebSockets) would let this
module go.

Under ASGI Django builds an asynchronous middleware chain, and every ``MiddlewareMixin`` middleware then
crosses into a thread twice per request (``process_request`` and ``process_response``): with our ten
middlewares and a sync view that is some thirty thread hops. All our middlewares and views are synchronous, so
the chain is built synchronously (``load_middleware(is_async=False)``) and crosses into its thread once.
``thread_sensitive`` keeps that thread the one the request's signals and database connection use.

That thread is lent (``RequestThreads``): Django's ``__call__`` enters a fresh ``ThreadSensitiveContext`` per
request, whose thread is started for the request and joined by yet another thread when it ends. asgiref 3.13's
``ThreadSensitiveContext(executor=…)`` lets the handler own the executor, so a request runs on the thread of
one that finished. Measured in one process (4 requests at a time, a 401 answer of the API): 1,210 µs of CPU a
request with a thread per request, 820 µs with lent threads. In the 2-agent HTTP drain (3,000 echo jobs,
nine repetitions an arm, the arms alternating): 99 against 90 jobs/s, and the server's CPU 9.7 against 11.3 ms
a job (medians).

Django's handler also crosses into that thread to send ``request_started``, and again after the response is
sent to close it (``request_finished``, which hands the database connection back). Here one crossing does all
three for a response whose body is already in memory: its close cannot affect the bytes sent, so it runs
before they are sent. A streamed response is still closed after sending, and so is one marked by
``close_after_sending``, whose closers do work the client need not wait for (the worker protocol's replay
store, processing/protocol/replay.py). A client that leaves before the answer does not stop the thread; the
response it makes is closed all the same, so its closers (and the replay lock they release) always run.
"""

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import FileResponse
from django.urls import set_script_prefix, set_urlconf
from django.utils.log import log_response

_CLOSE_AFTER_SENDING = "_quire_close_after_sending"


def close_after_sending(response):
    """Mark ``response`` to be closed (its resource closers run, ``request_finished`` sent) after its bytes are
    sent rather than before, as Django's own handlers always do; returns it."""
    setattr(response, _CLOSE_AFTER_SENDING, True)
    return response


def _closed_after_sending(response) -> bool:
    return response.streaming or getattr(response, _CLOSE_AFTER_SENDING, False)


class _RequestProcessed(Exception):
    """Ends the request's task group once the response is sent (which stops the disconnect listener)."""


class RequestThreads:
    """Single-thread executors, one lent to each request in flight and taken back when it ends.

    Django's handler enters a fresh ``ThreadSensitiveContext`` per request, which makes a new thread for the
    request and another to join it when the request ends. asgiref (3.13) lets the caller own the context's
    executor instead, so a request's thread is one a finished request used: the same one thread for all of a
    request's synchronous work, as before, without starting and joining two threads each time.
    """

    def __init__(self, keep: int) -> None:
        self._idle: list[ThreadPoolExecutor] = []
        self._keep = keep

    def lend(self) -> ThreadPoolExecutor:
        return self._idle.pop() if self._idle else ThreadPoolExecutor(max_workers=1, thread_name_prefix="request")

    def take_back(self, executor: ThreadPoolExecutor) -> None:
        if len(self._idle) < self._keep:
            self._idle.append(executor)
        else:
            executor.shutdown(wait=False)

    def idle(self) -> int:
        return len(self._idle)


class SyncChainASGIHandler(ASGIHandler):
    # Idle request threads kept: above it a request's thread ends with the request (a burst of long polls).
    KEPT_REQUEST_THREADS = int(os.environ.get("QUIRE_KEPT_REQUEST_THREADS", "32"))

    def __init__(self) -> None:
        super().__init__()
        self.request_threads = RequestThreads(keep=self.KEPT_REQUEST_THREADS)

    def load_middleware(self, is_async: bool = False) -> None:
        super().load_middleware(is_async=False)
        self._serve_in_thread = sync_to_async(self._serve, thread_sensitive=True)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        executor = self.request_threads.lend()
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, receive, send)
        except BaseException:
            # A request stopped midway (the server shutting down) may leave work queued on its thread: the
            # thread ends once that is done instead of serving another request.
            executor.shutdown(wait=False)
            raise
        self.request_threads.take_back(executor)

    def _serve(self, scope, body_file):
        """Everything a request does on its thread: started signal, request, chain, and (unless streamed) close."""
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            set_urlconf(settings.ROOT_URLCONF)
            response = self._middleware_chain(request)
            response._resource_closers.append(request.close)
            response._handler_class = self.__class__
            if response.status_code >= 400:
                log_response("%s: %s", response.reason_phrase, request.path, response=response, request=request)
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size  # the ASGI server does its own chunking
        if not _closed_after_sending(response):
            response.close()
        return response

    async def handle(self, scope, receive, send):
        """Django's ``ASGIHandler.handle`` with the request's synchronous work in one crossing (``_serve``)."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        with closing(body_file):
            response = None
            # Shielded: a client that leaves stops the wait, not the thread, whose response must still be closed.
            serving = asyncio.ensure_future(self._serve_in_thread(scope, body_file))
            try:
                try:
                    async with asyncio.TaskGroup() as tasks:
                        tasks.create_task(self.listen_for_disconnect(receive))
                        response = await asyncio.shield(serving)
                        await self.send_response(response, send)
                        raise _RequestProcessed
                except* (_RequestProcessed, RequestAborted):
                    pass
            except BaseExceptionGroup as group:
                if len(group.exceptions) == 1:
                    raise group.exceptions[0]  # noqa: B904  as Django's handler does
                raise
            if response is None:  # the client left before the answer
                response = await serving
            if _closed_after_sending(response):
                await sync_to_async(response.close)()
