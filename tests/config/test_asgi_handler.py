"""Under ASGI the middleware chain crosses into its thread once, and every middleware still runs."""

import asyncio

from asgiref.sync import SyncToAsync
from django.core.handlers.asgi import ASGIHandler

from config.http.asgi_handler import SyncChainASGIHandler

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


def _request_threads(handler, requests: int, *, together: bool, on_start=None) -> list:
    """Run ``requests`` anonymous GETs (one after the other, or all at once) and return the thread each
    request's synchronous part ran on, as seen by a ``request_started`` receiver."""
    import threading

    from django.core.signals import request_started

    threads = []

    def record(**kwargs):
        threads.append(threading.current_thread())  # the object: an ident may be reused by a later thread
        if on_start:
            on_start()

    async def one():
        receive = _receive_an_empty_body()

        async def send(message):
            pass

        await handler(SCOPE, receive, send)

    async def run():
        if together:
            await asyncio.gather(*(one() for _ in range(requests)))
        else:
            for _ in range(requests):
                await one()

    request_started.connect(record, weak=False)
    try:
        asyncio.run(run())
    finally:
        request_started.disconnect(record)
    return threads


def test_requests_one_after_another_reuse_one_thread(db):
    handler = SyncChainASGIHandler()

    threads = _request_threads(handler, 3, together=False)

    assert len(threads) == 3 and len(set(threads)) == 1
    assert handler.executors.idle == 1


def test_requests_at_the_same_time_each_get_a_thread_of_their_own(db):
    import threading

    handler = SyncChainASGIHandler()
    # Each request waits here for the other: on one shared thread they would never meet.
    both_started = threading.Barrier(2, timeout=10)

    threads = _request_threads(handler, 2, together=True, on_start=both_started.wait)

    assert len(set(threads)) == 2
    assert handler.executors.idle == 2


def test_the_shelf_keeps_only_so_many_idle_executors():
    import pytest

    from config.http.asgi_handler import ExecutorShelf

    shelf = ExecutorShelf(keep=1)
    first, second = shelf.take(), shelf.take()
    shelf.give_back(first)
    shelf.give_back(second)

    assert shelf.idle == 1
    assert shelf.take() is first
    with pytest.raises(RuntimeError):
        second.submit(print)  # shut down


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
