"""Serving a stored file's bytes as a download should be served: streamed from disk, never read whole into
memory, with its strong ``ETag`` (``If-None-Match`` → 304) and one byte range (``Range: bytes=a-b`` → 206,
``If-Range`` honoured; a range past the end → 416). PDF.js asks for ranges of a large PDF, so a reader sees
its first page before the last byte arrived.

Several ranges in one request (multipart/byteranges) are answered with the whole file, which RFC 9110 allows.
"""

import re
from pathlib import Path

from django.http import FileResponse, HttpResponse
from django.utils.http import content_disposition_header

CHUNK_BYTES = 256 * 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


class _Window:
    """A file read from ``start`` for ``length`` bytes, in chunks (what ``FileResponse`` streams)."""

    def __init__(self, path: Path, start: int, length: int):
        self._file = open(path, "rb")  # noqa: SIM115  closed by FileResponse when the response is
        self._file.seek(start)
        self._left = length

    def read(self, size: int = -1) -> bytes:
        size = self._left if size < 0 else min(size, self._left)
        data = self._file.read(size)
        self._left -= len(data)
        return data

    def close(self) -> None:
        self._file.close()


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
    common = {"ETag": etag, "Accept-Ranges": "bytes", "Cache-Control": "private, no-cache"}
    if etag in [tag.strip() for tag in request.headers.get("If-None-Match", "").split(",")]:
        return HttpResponse(status=304, headers=common)
    wanted = None
    if "Range" in request.headers and request.headers.get("If-Range", etag) == etag:
        wanted = _wanted(request.headers["Range"], size)
    if wanted == "unsatisfiable":
        return HttpResponse(status=416, headers={**common, "Content-Range": f"bytes */{size}"})
    start, end = wanted if wanted else (0, size - 1)
    response = FileResponse(_Window(path, start, end - start + 1), content_type=content_type)
    response.block_size = CHUNK_BYTES
    response["Content-Length"] = str(end - start + 1)
    for name, value in common.items():
        response[name] = value
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Disposition"] = content_disposition_header(attachment, filename)
    if wanted:
        response.status_code = 206
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
    return response
