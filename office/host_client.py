"""A server process's side of its machine's shared Office host (``office/host_service.py``).

It stands where a host of the process's own would stand (``office.runtime``), with the same calls: convert
from an async view, submit a prewarm, read the figures, switch background conversions. A service that cannot
be reached is ``ConverterUnavailable`` (503, retry shortly), as converters that cannot start are.
"""

import asyncio
import concurrent.futures
import contextlib
import socket

from office.exceptions import ConverterUnavailable
from office.host import Preview, Priority, SourceRead, SourceRef
from office.host_wire import (
    answer_decode,
    convert_request,
    error_raise_if_any,
    frame_encode,
    frame_read,
    frame_read_blocking,
)
from office.runtime import HostSnapshot

CALL_TIMEOUT = 5.0  # figures, switches and prewarm admission: local and quick, or the service is in trouble


def _unreachable(reason: str) -> ConverterUnavailable:
    return ConverterUnavailable(
        "The Office preview service of this machine is not answering; retry shortly. (Operators: it is "
        "`manage.py office_host`, which `make run` starts; OFFICE_HOST=process gives each server its own.)",
        details={"reason": reason},
    )


class RemoteHost:
    def __init__(self, socket_path: str):
        self.socket_path = socket_path

    async def convert(self, *, source: SourceRef, read: SourceRead, priority: Priority) -> Preview:
        """The service reads the source itself (``read`` is for a host of the process's own). Cancelling the
        caller closes the connection, which detaches its reader there."""
        try:
            reader, writer = await asyncio.open_unix_connection(self.socket_path)
        except OSError as exc:
            raise _unreachable(type(exc).__name__) from exc
        try:
            writer.write(frame_encode(convert_request(source, priority, wait=True)))
            await writer.drain()
            header, body = await frame_read(reader)
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise _unreachable("the service closed the connection") from exc
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await writer.wait_closed()
        return answer_decode(header, body)

    def submit(self, *, source: SourceRef, read: SourceRead, priority: Priority) -> concurrent.futures.Future:
        """Hand a prewarm to the service, which converts it for nobody waiting; the future says it was taken."""
        taken: concurrent.futures.Future = concurrent.futures.Future()
        try:
            self._call(convert_request(source, priority, wait=False))
            taken.set_result(None)
        except Exception as exc:  # the future carries it to the caller's done callback, as a local host's does
            taken.set_exception(exc)
        return taken

    def snapshot(self) -> HostSnapshot:
        return HostSnapshot(**self._call({"kind": "snapshot"}))

    def background_set(self, enabled: bool) -> None:
        self._call({"kind": "background", "enabled": enabled})

    def close(self) -> None:
        """Nothing is held between calls."""

    def _call(self, request: dict) -> dict:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(CALL_TIMEOUT)
                sock.connect(self.socket_path)
                sock.sendall(frame_encode(request))
                header, _ = frame_read_blocking(sock)
        except OSError as exc:
            raise _unreachable(type(exc).__name__) from exc
        error_raise_if_any(header)
        header.pop("body")
        return header
