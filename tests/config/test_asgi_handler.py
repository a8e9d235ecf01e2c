"""Under ASGI the middleware chain crosses into its thread once, and every middleware still runs."""

import asyncio
import inspect
import re

import pytest
from asgiref.sync import SyncToAsync, ThreadSensitiveContext
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler

from config.http.asgi_handler import SyncChainASGIHandler
from tests.config.pins import changed

SCOPE = {
    "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
    "path": "/v1/projects", "raw_path": b"/v1/projects", "query_string": b"", "headers": [(b"host", b"127.0.0.1")],
    "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000),
}  # fmt: skip


def _receive_an_empty_body():
    """An ASGI ``receive`` for a request without a body whose client then stays connected."""
    requested = []

    async def receive():
        if not requested:
            requested.append(True)
            return {"type": "http.request", "body": b"", "more_body": False}
        await asyncio.sleep(3600)

    return receive


def _get(handler, monkeypatch) -> tuple[list[dict], int]:
    """The messages sent for one anonymous GET, and how many times the request crossed into a thread."""
    sent: list[dict] = []
    crossings = []
    original = SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        crossings.append(self.func)
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    receive = _receive_an_empty_body()

    async def send(message):
        sent.append(message)

    asyncio.run(handler(SCOPE, receive, send))
    monkeypatch.setattr(SyncToAsync, "__call__", original)
    return sent, len(crossings)


def test_the_answer_is_the_one_the_stock_handler_gives(monkeypatch, db):
    stock, _ = _get(ASGIHandler(), monkeypatch)
    ours, _ = _get(SyncChainASGIHandler(), monkeypatch)

    assert ours[0]["status"] == stock[0]["status"] == 401  # the API's own answer: the view ran
    assert ours[0]["headers"] == stock[0]["headers"]
    headers = {name.lower(): value for name, value in ours[0]["headers"]}
    assert headers[b"x-frame-options"] == b"DENY"  # XFrameOptionsMiddleware ran
    assert headers[b"x-content-type-options"] == b"nosniff"  # and SecurityMiddleware
    assert [m.get("body") for m in ours[1:]] == [m.get("body") for m in stock[1:]]


def test_the_chain_crosses_into_a_thread_once_instead_of_per_middleware(monkeypatch, db):
    _, stock = _get(ASGIHandler(), monkeypatch)
    _, ours = _get(SyncChainASGIHandler(), monkeypatch)

    # Ours: one crossing for the request_started signal, the whole chain, the 4xx log line and the close.
    assert ours == 1
    assert stock >= ours + 10  # two crossings for each MiddlewareMixin middleware


def _finish_order(handler, receive=None) -> list:
    """What happened, in order, during one request: signals (with their thread) and the messages sent."""
    import threading

    from django.core.signals import request_finished, request_started

    events = []

    def started(**kwargs):
        events.append(("started", threading.current_thread()))

    def finished(**kwargs):
        events.append(("finished", threading.current_thread()))

    receive = receive or _receive_an_empty_body()

    async def send(message):
        events.append((message["type"], message.get("body")))

    request_started.connect(started, weak=False)
    request_finished.connect(finished, weak=False)
    try:
        asyncio.run(handler(SCOPE, receive, send))
    finally:
        request_started.disconnect(started)
        request_finished.disconnect(finished)
    return events


def test_a_response_in_memory_is_finished_on_its_own_thread_before_it_is_sent(db):
    events = _finish_order(SyncChainASGIHandler())

    assert [name for name, _ in events] == ["started", "finished", "http.response.start", "http.response.body"]
    assert events[0][1] is events[1][1]  # the thread whose database connection the request used
    assert b"not_authenticated" in events[-1][1]  # the body was complete when the request was finished


async def _chunks():
    yield b"first"
    yield b"last"


def test_a_streamed_response_is_finished_after_its_last_chunk(db):
    from django.http import StreamingHttpResponse

    handler = SyncChainASGIHandler()
    handler._middleware_chain = lambda request: StreamingHttpResponse(_chunks())

    events = _finish_order(handler)

    names = [name for name, _ in events]
    assert names[0] == "started" and names[-1] == "finished"
    assert [body for name, body in events if name == "http.response.body" and body] == [b"first", b"last"]


def test_a_client_that_leaves_before_the_answer_still_finishes_the_request(db):
    import time

    from django.http import StreamingHttpResponse

    def slow_streamed_answer(request):
        time.sleep(0.3)  # the client is gone by now
        return StreamingHttpResponse(_chunks())  # a streamed response is not closed on the request's thread

    handler = SyncChainASGIHandler()
    handler._middleware_chain = slow_streamed_answer
    messages = iter([{"type": "http.request", "body": b"", "more_body": False}, {"type": "http.disconnect"}])

    async def receive():
        return next(messages)

    events = _finish_order(handler, receive)

    # Nothing was sent to the departed client, and request_finished gave the database connection back.
    assert [name for name, _ in events] == ["started", "finished"]


def test_a_response_marked_to_close_after_sending_is_finished_after_its_body(db):
    from django.http import HttpResponse

    from config.http.asgi_handler import close_after_sending

    closed = []

    def answer(request):
        response = HttpResponse(b"answer")
        response._resource_closers.append(lambda: closed.append("closer"))
        return close_after_sending(response)

    handler = SyncChainASGIHandler()
    handler._middleware_chain = answer

    events = _finish_order(handler)

    assert [name for name, _ in events] == ["started", "http.response.start", "http.response.body", "finished"]
    assert events[0][1] is events[-1][1]  # closed on the thread whose database connection the request used
    assert closed == ["closer"]


def test_a_client_that_leaves_before_a_marked_answer_still_has_it_closed(db):
    import time

    from django.http import HttpResponse

    from config.http.asgi_handler import close_after_sending

    closed = []

    def slow_answer(request):
        time.sleep(0.3)  # the client is gone by now
        response = HttpResponse(b"answer")
        response._resource_closers.append(lambda: closed.append("closer"))  # a replay lock's release, say
        return close_after_sending(response)

    handler = SyncChainASGIHandler()
    handler._middleware_chain = slow_answer
    messages = iter([{"type": "http.request", "body": b"", "more_body": False}, {"type": "http.disconnect"}])

    async def receive():
        return next(messages)

    events = _finish_order(handler, receive)

    assert [name for name, _ in events] == ["started", "finished"]  # nothing sent to the departed client
    assert closed == ["closer"]


def _threads_of_requests(handler, *, concurrent: int, rounds: int = 1) -> list[list]:
    """For each request (``concurrent`` at a time, ``rounds`` times), the threads its request_started and
    request_finished ran on; each request's chain takes 50 ms."""
    import threading
    import time

    from django.core.signals import request_finished, request_started
    from django.http import HttpResponse

    from config.http.asgi_handler import close_after_sending

    threads_by_request: dict[int, list] = {}
    current = {}

    def answer(request):
        time.sleep(0.05)
        return close_after_sending(HttpResponse(b"answer"))  # finished on a second crossing, after sending

    def started(**kwargs):
        current[threading.get_ident()] = len(threads_by_request)
        threads_by_request[len(threads_by_request)] = [threading.current_thread()]

    def finished(**kwargs):
        threads_by_request[current[threading.get_ident()]].append(threading.current_thread())

    handler._middleware_chain = answer

    async def requests():
        for _ in range(rounds):
            await asyncio.gather(*(handler(SCOPE, _receive_an_empty_body(), _discard) for _ in range(concurrent)))

    request_started.connect(started, weak=False)
    request_finished.connect(finished, weak=False)
    try:
        asyncio.run(requests())
    finally:
        request_started.disconnect(started)
        request_finished.disconnect(finished)
    return list(threads_by_request.values())


async def _discard(message):
    pass


def test_a_request_runs_on_one_thread_which_the_next_request_reuses(db):
    first, second = _threads_of_requests(SyncChainASGIHandler(), concurrent=1, rounds=2)

    assert first[0] is first[1] and second[0] is second[1]  # started and finished on the request's thread
    assert second[0] is first[0]  # no thread started (and joined) for the second request


def test_requests_in_flight_together_each_have_a_thread_of_their_own(db):
    handler = SyncChainASGIHandler()
    threads = _threads_of_requests(handler, concurrent=3, rounds=2)

    assert len({started for started, _ in threads[:3]}) == 3  # the three ran side by side
    assert {started for started, _ in threads[3:]} == {started for started, _ in threads[:3]}  # then again
    assert all(started is finished for started, finished in threads)
    assert handler.request_threads.idle() == 3


def test_threads_beyond_those_kept_idle_end_with_their_request(db, monkeypatch):
    import time

    monkeypatch.setattr(SyncChainASGIHandler, "KEPT_REQUEST_THREADS", 2)
    handler = SyncChainASGIHandler()

    threads = {started for started, _ in _threads_of_requests(handler, concurrent=4)}

    deadline = time.monotonic() + 5
    while sum(thread.is_alive() for thread in threads) > 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(threads) == 4
    assert sum(thread.is_alive() for thread in threads) == 2  # the two kept for the next requests
    assert handler.request_threads.idle() == 2


def test_a_request_stopped_midway_does_not_hand_its_thread_to_the_next(db):
    """A cancelled request (the server shutting down) may leave work on its thread: that thread is not lent
    again, and it ends once the work is done."""
    import threading
    import time

    from django.http import HttpResponse

    handler = SyncChainASGIHandler()
    threads = []

    def slow_answer(request):
        threads.append(threading.current_thread())
        time.sleep(0.2)
        return HttpResponse(b"answer")

    handler._middleware_chain = slow_answer

    async def cancelled_midway():
        request = asyncio.ensure_future(handler(SCOPE, _receive_an_empty_body(), _discard))
        await asyncio.sleep(0.05)
        request.cancel()
        with pytest.raises(asyncio.CancelledError):
            await request

    asyncio.run(cancelled_midway())

    [thread] = threads
    thread.join(timeout=5)
    assert not thread.is_alive()  # it finished the work left on it, then ended
    assert handler.request_threads.idle() == 0  # and was never lent again


def _exchange(handler, method: str, path: str, *, body: bytes = b"", headers=()) -> tuple[int, list, bytes]:
    """One request through ``handler``: its status, its headers and its body (cookies' values, the Expires time
    and CSRF tokens dropped: they differ from one request to the next)."""
    scope = {
        **SCOPE,
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "headers": [(b"host", b"127.0.0.1"), *headers],
    }
    sent: list[dict] = []
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive():
        if chunks:
            return chunks.pop()
        await asyncio.sleep(3600)

    async def send(message):
        sent.append(message)

    asyncio.run(handler(scope, receive, send))
    start, *bodies = sent
    # Cookies' values are random, and a page's Expires is the second it was rendered in.
    heads = [(name.lower(), b"" if name.lower() in _VARYING else value) for name, value in start["headers"]]
    heads = [(name, _NONCE.sub(b"nonce-<nonce>", value)) for name, value in heads]  # the CSP's, fresh each time
    body = b"".join(message.get("body", b"") for message in bodies)
    body = _NONCE_ATTRIBUTE.sub(b'nonce="<nonce>"', _NONCE_META.sub(b'name="csp-nonce" content="<nonce>"', body))
    return start["status"], heads, re.sub(rb"[A-Za-z0-9]{64}", b"<csrf token>", body)  # random on every page


_VARYING = {b"set-cookie", b"expires"}
_NONCE = re.compile(rb"nonce-[A-Za-z0-9+/=_-]+")
_NONCE_META = re.compile(rb'name="csp-nonce" content="[^"]*"')
_NONCE_ATTRIBUTE = re.compile(rb'nonce="[^"]*"')

REQUESTS = [
    ("GET", "/v1/projects", b"", ()),  # the API refuses an anonymous client
    ("GET", "/login/", b"", ()),  # a page: session, CSRF cookie, messages, clickjacking header
    ("POST", "/login/", b"username=a&password=b", ((b"content-type", b"application/x-www-form-urlencoded"),)),
    ("GET", "/no-such-page", b"", ()),  # 404 from the URL list's handler
    ("HEAD", "/v1/projects", b"", ()),
    ("GET", "/v1/projects", b"", ((b"x-huge", b"a" * 9000),)),  # refused by a middleware (431)
    ("GET", "/internal/processing/v1/sessions/00000000-0000-0000-0000-000000000000/drain", b"", ()),
]


@pytest.mark.parametrize(("method", "path", "body", "headers"), REQUESTS)
def test_every_answer_is_the_one_the_stock_handler_gives(method, path, body, headers, db):
    """Django's ASGIHandler is the reference: an upgrade that changes what it answers shows here."""
    stock = _exchange(ASGIHandler(), method, path, body=body, headers=headers)
    ours = _exchange(SyncChainASGIHandler(), method, path, body=body, headers=headers)

    assert ours == stock


# Written against Django 6.1.3. ``SyncChainASGIHandler.handle`` copies ``ASGIHandler.handle``, ``_serve`` copies
# ``BaseHandler.get_response`` (and the response fix-ups of ``run_get_response``); the rest it calls as is.
PINNED = {
    "ASGIHandler.__call__": (ASGIHandler.__call__, "f756809e9c9308dc"),
    "ASGIHandler.handle": (ASGIHandler.handle, "c91f27c7fcdc3fff"),
    "ASGIHandler.run_get_response": (ASGIHandler.run_get_response, "0234ea5fe09a5777"),
    "ASGIHandler.read_body": (ASGIHandler.read_body, "88b4e284fc829700"),
    "ASGIHandler.create_request": (ASGIHandler.create_request, "5eae59c6696013ff"),
    "ASGIHandler.send_response": (ASGIHandler.send_response, "d91e83d2c6859eda"),
    "ASGIHandler.listen_for_disconnect": (ASGIHandler.listen_for_disconnect, "c729aa315c734f98"),
    "BaseHandler.get_response": (BaseHandler.get_response, "3d6a79b124c2cccb"),
    "BaseHandler.get_response_async": (BaseHandler.get_response_async, "ad82c920df0cebbb"),
    # asgiref 3.13.0: a context given an executor routes the request's thread-sensitive calls to it and leaves
    # it running on exit (SyncChainASGIHandler lends each request a finished request's thread).
    "ThreadSensitiveContext.__aenter__": (ThreadSensitiveContext.__aenter__, "b0355bf6b275a7c2"),
    "ThreadSensitiveContext.__aexit__": (ThreadSensitiveContext.__aexit__, "5571fec562fa6e84"),
}


def test_the_django_and_asgiref_internals_it_copies_are_those_it_was_written_against():
    assert changed(PINNED) == {}, (
        "Django's handler internals changed since config/http/asgi_handler.py was written against "
        "Django 6.1.3: read them beside SyncChainASGIHandler, port the change (or drop ours for "
        "the stock ASGIHandler if its gain is gone: see its docstring's benchmark), then update these digests."
    )


def test_the_private_response_attributes_it_sets_still_exist_and_work(db):
    from django.http import HttpResponse

    closed = []
    response = HttpResponse(b"x")
    response._resource_closers.append(lambda: closed.append(True))
    response.close()

    assert closed == [True]  # _serve appends request.close here, as BaseHandler.get_response does
    assert "_handler_class" in inspect.getsource(ASGIHandler.run_get_response)
