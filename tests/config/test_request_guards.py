"""The ASGI edge refuses bodies over the cap itself, so Django never answers a request it abandoned."""

import asyncio
import json

from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler

from config.http.asgi_guards import RequestGuards
from tests.config.pins import changed


def _exchange(scope: dict, chunks: list[bytes]) -> list[dict]:
    sent: list[dict] = []
    last = len(chunks) - 1
    pending = [{"type": "http.request", "body": chunk, "more_body": i < last} for i, chunk in enumerate(chunks)]

    async def receive():
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    asyncio.run(RequestGuards(get_asgi_application())(scope, receive, send))
    return sent


def _scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "PUT",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
    }


def test_a_chunked_body_growing_past_the_cap_gets_one_413_in_the_error_shape(settings):
    settings.QUIRE_MAX_REQUEST_BYTES = 1000
    sent = _exchange(_scope("/v1/projects/x/files/a.bin", [(b"transfer-encoding", b"chunked")]), [b"a" * 600] * 3)

    starts = [message for message in sent if message["type"] == "http.response.start"]
    assert [start["status"] for start in starts] == [413]
    body = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    assert json.loads(body)["error"]["code"] == "payload_too_large"


def test_a_declared_length_over_the_cap_is_refused_before_reading(settings):
    settings.QUIRE_MAX_REQUEST_BYTES = 1000
    sent = _exchange(_scope("/v1/projects/x/files/a.bin", [(b"content-length", b"5000")]), [])

    assert sent[0]["status"] == 413


def test_a_path_that_is_not_utf8_is_400(settings):
    scope = _scope("/v1/projects/x", [])
    scope["raw_path"] = b"/v1/projects/%ff"
    sent = _exchange(scope, [b""])

    assert sent[0]["status"] == 400
    assert json.loads(sent[1]["body"])["error"]["code"] == "invalid_path"


# Written against Django 6.1.3: the guards exist because ``ASGIHandler.read_body`` reads (and spools) the whole
# body before anything can refuse it, and their mid-body 413 relies on it abandoning a request whose ``receive``
# says ``http.disconnect`` without answering.
PINNED = {"ASGIHandler.read_body": (ASGIHandler.read_body, "88b4e284fc829700")}


def test_djangos_body_reading_is_the_one_the_guards_were_written_against():
    assert changed(PINNED) == {}, (
        "Django's ASGIHandler.read_body changed since config/http/asgi_guards.py was written against Django 6.1.3: "
        "check whether it now limits bodies itself (then drop the size guard) and that a disconnect still "
        "abandons the request, then update the digest."
    )


def test_djangos_handler_still_reads_any_body_and_answers_nothing_after_a_disconnect(settings):
    """What the guards lean on: the stock handler takes a body over Django's own cap without refusing it while
    reading, and sends nothing at all for a request whose client went away mid-body."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10
    sent: list[dict] = []
    messages = [{"type": "http.request", "body": b"a" * 100, "more_body": True}, {"type": "http.disconnect"}]
    read = []

    async def receive():
        read.append(messages[0]["type"])
        return messages.pop(0)

    async def send(message):
        sent.append(message)

    asyncio.run(ASGIHandler()(_scope("/v1/projects/x/files/a.bin", []), receive, send))

    assert read == ["http.request", "http.disconnect"] and sent == []
