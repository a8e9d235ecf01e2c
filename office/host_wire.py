"""What a server process and its machine's Office host service say to each other over a Unix socket.

One request per connection. A frame is a 4-byte big-endian length, that many bytes of JSON header, then
``header["body"]`` bytes (a PDF, or nothing). Errors cross as their code, message and details and are raised
again on the caller's side as the same ``OfficeError`` subclass, so a view answers exactly as it would with a
host of its own.
"""

import asyncio
import json
import socket
import struct
import uuid

from office import exceptions
from office.host import Preview, Priority, SourceRef

_LENGTH = struct.Struct(">I")
MAX_HEADER_BYTES = 1024 * 1024


def _error_classes() -> dict[str, type[exceptions.OfficeError]]:
    found, pending = {}, [exceptions.OfficeError]
    while pending:
        cls = pending.pop()
        found[cls.code] = cls
        pending.extend(cls.__subclasses__())
    return found


ERRORS_BY_CODE = _error_classes()


def frame_encode(header: dict, body: bytes = b"") -> bytes:
    encoded = json.dumps({**header, "body": len(body)}).encode()
    return _LENGTH.pack(len(encoded)) + encoded + body


async def frame_read(reader: asyncio.StreamReader) -> tuple[dict, bytes]:
    """Raises ``asyncio.IncompleteReadError`` when the other side closed before a whole frame."""
    (length,) = _LENGTH.unpack(await reader.readexactly(_LENGTH.size))
    if length > MAX_HEADER_BYTES:
        raise ValueError("an Office host frame header over its limit")
    header = json.loads(await reader.readexactly(length))
    return header, await reader.readexactly(header["body"])


def frame_read_blocking(sock: socket.socket) -> tuple[dict, bytes]:
    (length,) = _LENGTH.unpack(_exactly(sock, _LENGTH.size))
    if length > MAX_HEADER_BYTES:
        raise ValueError("an Office host frame header over its limit")
    header = json.loads(_exactly(sock, length))
    return header, _exactly(sock, header["body"])


def _exactly(sock: socket.socket, count: int) -> bytes:
    chunks, left = [], count
    while left:
        chunk = sock.recv(min(left, 1024 * 1024))
        if not chunk:
            raise ConnectionError("the Office host closed the connection mid-answer")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def source_encode(source: SourceRef) -> dict:
    return {
        "project_id": str(source.project_id),
        "path": source.path,
        "version": source.version,
        "size_bytes": source.size_bytes,
    }


def source_decode(fields: dict) -> SourceRef:
    return SourceRef(uuid.UUID(fields["project_id"]), fields["path"], fields["version"], fields["size_bytes"])


def convert_request(source: SourceRef, priority: Priority, *, wait: bool) -> dict:
    return {"kind": "convert", "source": source_encode(source), "priority": priority.name, "wait": wait}


def preview_answer(preview: Preview) -> bytes:
    header = {
        "page_count": preview.page_count,
        "source_sha256": preview.source_sha256,
        "generation": preview.generation,
        "cache_hit": preview.cache_hit,
    }
    return frame_encode(header, preview.pdf)


def error_answer(error: exceptions.OfficeError) -> bytes:
    return frame_encode({"error": {"code": error.code, "message": error.message, "details": error.details}})


def answer_decode(header: dict, body: bytes) -> Preview:
    """The preview an answer carries, or its error raised."""
    error_raise_if_any(header)
    return Preview(body, header["page_count"], header["source_sha256"], header["generation"], header["cache_hit"])


def error_raise_if_any(header: dict) -> None:
    error = header.get("error")
    if error is not None:
        cls = ERRORS_BY_CODE.get(error["code"], exceptions.OfficeError)
        raise cls(error["message"], details=error["details"])
