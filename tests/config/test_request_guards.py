"""The ASGI edge refuses bodies over their endpoint's limit itself, reading no further than one chunk past it,
so Django never answers a request it abandoned."""

import asyncio
import json

import pytest
from django.core.asgi import get_asgi_application
from django.core.handlers.asgi import ASGIHandler

from config.http.asgi_guards import RequestGuards
from config.http.body_limits import body_limit_for
from tests.config.pins import changed


def _exchange(scope: dict, chunks: list[bytes], read: list | None = None, *, stays: bool = False) -> list[dict]:
    """The messages sent for one request whose body arrives in ``chunks``; ``read`` collects the chunks taken.
    The client leaves after its body unless it ``stays`` for the answer."""
    sent: list[dict] = []
    last = len(chunks) - 1
    pending = [{"type": "http.request", "body": chunk, "more_body": i < last} for i, chunk in enumerate(chunks)]
    read = [] if read is None else read

    async def receive():
        if not pending:
            await asyncio.sleep(3600 if stays else 0)
            return {"type": "http.disconnect"}
        read.append(pending[0]["body"])
        return pending.pop(0)

    async def send(message):
        sent.append(message)

    asyncio.run(RequestGuards(get_asgi_application())(scope, receive, send))
    return sent


def _scope(path: str, headers: list[tuple[bytes, bytes]], method: str = "PUT") -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
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


MiB = 1024 * 1024
PROJECT = "/v1/projects/6f1c1bde-8a43-4b4b-9d2a-7f4a5c1e0b11"
CHUNKED = [(b"transfer-encoding", b"chunked")]


def _refusal(sent: list[dict]) -> tuple[list[int], dict]:
    starts = [message["status"] for message in sent if message["type"] == "http.response.start"]
    body = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    return starts, json.loads(body)["error"]


def test_a_chunked_pdf_is_read_only_to_the_librarys_limit_not_the_deployments_cap():
    read: list[bytes] = []
    chunk = b"%" * MiB
    sent = _exchange(_scope(f"{PROJECT}/library", CHUNKED, method="POST"), [chunk] * 100, read)  # 100 MiB

    statuses, error = _refusal(sent)
    assert statuses == [413]
    assert error["code"] == "payload_too_large" and error["details"]["limit_bytes"] == 64 * MiB
    assert len(read) == 65  # the library's 64 MiB and the chunk that went past it, not the 100 MiB sent


def test_a_form_upload_is_cut_at_its_files_limit_with_the_error_the_view_gives(settings):
    settings.LIBRARY_MAX_PDF_BYTES = 100 * 1024
    read: list[bytes] = []
    sent = _exchange(
        _scope(f"{PROJECT}/library/upload".removeprefix("/v1"), CHUNKED, "POST"), [b"a" * 32768] * 20, read
    )

    statuses, error = _refusal(sent)
    assert statuses == [413] and error["code"] == "pdf_too_large"
    assert error["details"]["limit_bytes"] == 100 * 1024 + 64 * 1024  # the file and a form's overhead
    assert len(read) == 6


def test_an_endpoint_that_declares_no_limit_reads_at_most_two_mebibytes():
    read: list[bytes] = []
    sent = _exchange(_scope("/v1/projects", CHUNKED, method="POST"), [b"{" * 65536] * 64, read)  # 4 MiB

    statuses, error = _refusal(sent)
    assert statuses == [413] and error["details"]["limit_bytes"] == 2 * MiB
    assert len(read) == 33


def test_a_declared_length_over_the_endpoints_limit_is_refused_before_reading(settings):
    settings.COLLAB_MAX_UPDATE_BYTES = 1000
    read: list[bytes] = []
    path = f"{PROJECT}/documents/main.tex/updates"
    sent = _exchange(_scope(path, [(b"content-length", str(3 * MiB).encode())], "POST"), [b"u" * MiB] * 3, read)

    statuses, error = _refusal(sent)
    assert statuses == [413] and error["code"] == "update_too_large"
    assert error["details"] == {"limit_bytes": 1000, "size_bytes": 3 * MiB}
    assert read == []


@pytest.mark.django_db
def test_a_body_within_its_endpoints_limit_reaches_the_view():
    sent = _exchange(
        _scope(f"{PROJECT}/files/big.bin", CHUNKED), [b"b" * MiB] * 3, stays=True
    )  # over 2 MiB, under 64 MiB

    assert sent[0]["status"] == 401  # the view's own answer to an anonymous client: the body was let through


@pytest.mark.parametrize(
    ("path", "limit_bytes", "code"),
    [
        (f"{PROJECT}/files/a.bin", 64 * MiB, "payload_too_large"),
        (f"{PROJECT}/documents/main.tex/updates", 3 * MiB, "update_too_large"),
        (f"{PROJECT}/library", 64 * MiB, "payload_too_large"),
        (f"{PROJECT}/library/6f1c1bde-8a43-4b4b-9d2a-7f4a5c1e0b12/pdf", 64 * MiB, "payload_too_large"),
        ("/v1/imports/pptx", 64 * MiB, "payload_too_large"),
        ("/internal/processing/v1/transfers/6f1c1bde-8a43-4b4b-9d2a-7f4a5c1e0b13", 128 * MiB, "payload_too_large"),
        ("/imports/pptx/submit", 64 * MiB + 64 * 1024, "payload_too_large"),
        (f"{PROJECT.removeprefix('/v1')}/library/upload", 64 * MiB + 64 * 1024, "pdf_too_large"),
    ],
)
def test_every_endpoint_that_takes_large_bodies_declares_its_limit(path, limit_bytes, code):
    declared = body_limit_for(path)

    assert (declared.limit_bytes(), declared.too_large.code) == (limit_bytes, code)


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
