"""Serving stored bytes as a download should be served: streamed a chunk at a time, never read whole into
memory, with its strong ``ETag`` (``If-None-Match`` → 304) and one byte range (``Range: bytes=a-b`` → 206,
``If-Range`` honoured; a range past the end → 416). PDF.js asks for ranges of a large PDF, so a reader sees
its first page before the last byte arrived.

The bytes come from a ``Window``: a file on disk (``file_download``) or a blob in PostgreSQL (Processing's
``BlobWindow``), read ``CHUNK_BYTES`` at a time. Download views are synchronous, so Django's WSGI handler
serves them (config/http/handlers.py) and iterates the body in the request's thread.

Several ranges in one request (multipart/byteranges) are answered with the whole file, which RFC 9110 allows.
"""

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from django.http import HttpResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header

# Eight 40 MiB downloads at once grew a server process's peak memory by 57-66 MiB in chunks of 1 MiB and by
# 14 MiB in chunks of 256 KiB (tests/processing/api/test_streamed_downloads.py, four CPU hogs beside it).
CHUNK_BYTES = 256 * 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class Window(Protocol):
    """``length`` bytes from ``start`` of some stored bytes, read in order."""

    def read(self, size: int) -> bytes: ...
    def close(self) -> None: ...


class _FileWindow:
    """A file read from ``start`` for ``length`` bytes."""

    def __init__(self, path: Path, start: int, length: int):
        self._file = open(path, "rb")  # noqa: SIM115  closed when the response's body ends
        self._file.seek(start)
        self._left = length

    def read(self, size: int) -> bytes:
        data = self._file.read(min(size, self._left))
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._file.close()


def _streamed(window: Window) -> Iterator[bytes]:
    """The window's bytes a chunk at a time, read in the request's thread (a database read there uses the
    request's connection)."""
    try:
        while chunk := window.read(CHUNK_BYTES):
            yield chunk
    finally:
        window.close()


def _wanted(header: str, size: int) -> tuple[int, int] | str | None:
    """(first, last) of a single satisfiable range; None to send everything; "unsatisfiable"."""
    match = _RANGE.match(header.strip())
    if match is None or size == 0:
        return None
    first, last = match.groups()
    if first == "" and last == "":
        return None
    if first == "":  # the last N bytes
        count = int(last)
        return (max(0, size - count), size - 1) if count > 0 else "unsatisfiable"
    start = int(first)
    if start >= size:
        return "unsatisfiable"
    end = min(int(last), size - 1) if last else size - 1
    return (start, end) if end >= start else None


def file_download(
    request, path: Path, *, size: int, etag: str, content_type: str, filename: str, attachment: bool
) -> HttpResponse:
    """Answer ``request`` with the file at ``path`` (``size`` bytes, strong entity tag ``etag`` with quotes)."""
    return ranged_download(
        request,
        lambda start, length: _FileWindow(path, start, length),
        size=size,
        etag=etag,
        content_type=content_type,
        filename=filename,
        attachment=attachment,
    )


def ranged_download(
    request,
    window: Callable[[int, int], Window],
    *,
    size: int,
    etag: str,
    content_type: str,
    filename: str,
    attachment: bool,
) -> HttpResponse:
    """Answer ``request`` with ``size`` bytes that ``window(start, length)`` reads (strong ``etag``, quoted)."""
    common = {"ETag": etag, "Accept-Ranges": "bytes", "Cache-Control": "private, no-cache"}
    if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        return HttpResponse(status=304, headers=common)
    wanted = None
    if "Range" in request.headers and request.headers.get("If-Range", etag) == etag:
        wanted = _wanted(request.headers["Range"], size)
    if wanted == "unsatisfiable":
        return HttpResponse(status=416, headers={**common, "Content-Range": f"bytes */{size}"})
    start, end = wanted if wanted else (0, size - 1)
    response = StreamingHttpResponse(_streamed(window(start, end - start + 1)), content_type=content_type)
    response["Content-Length"] = str(end - start + 1)
    for name, value in common.items():
        response[name] = value
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = content_disposition_header(attachment, filename)
    if attachment or content_type == "application/pdf":
        # Not a page: the pages' policy (settings.SECURE_CSP) would only get in the way of the browser's PDF
        # viewer. Anything else inline (never HTML from here) keeps it.
        response._csp_config = {}
    if wanted:
        response.status_code = 206
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
    return response
