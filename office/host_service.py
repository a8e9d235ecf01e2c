"""This machine's one Office host, served to its server processes over a Unix socket (seed 004's shared host).

Every server process of a machine sends its previews here instead of keeping a host of its own, so they share
one conversion queue, one cache, one set of limits and one set of warm converters. A server process has
already authorized the person and read the file's metadata; the service reads the bytes itself (it is a
Django process with the same database and storage) when the host admits the conversion, exactly as an
in-process host does. A caller that disconnects stops waiting, and the conversion stops if nobody else waits
for it. ``manage.py office_host`` runs it.
"""

import asyncio
import contextlib
import os
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from office.exceptions import OfficeError
from office.host import Priority, SourceRead, SourceRef
from office.host_wire import error_answer, frame_encode, frame_read, preview_answer, source_decode
from office.runtime import HostRuntime


class HostService:
    def __init__(
        self,
        runtime: HostRuntime,
        reader_for: Callable[[SourceRef], SourceRead],
        prewarm_finished: Callable[[asyncio.Future], None],
    ):
        """``reader_for`` reads a source's bytes for the host; ``prewarm_finished`` is told how a prewarm ended
        (``office.services`` gives both, as for a host of a server process's own)."""
        self.runtime, self.reader_for, self.prewarm_finished = runtime, reader_for, prewarm_finished
        self._server: asyncio.Server | None = None
        self._prewarms: set[asyncio.Task] = set()

    def start(self, path: Path) -> None:
        """Listen on ``path`` (only this machine's users who may open it can connect: mode 0600)."""
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # left by a service that was killed
        self._server = self.runtime.call(asyncio.start_unix_server(self._answer, path=str(path)))
        os.chmod(path, 0o600)

    def stop(self) -> None:
        if self._server is not None:
            # On the host's loop: asyncio's Server is not thread-safe, and closing it from this thread raced a
            # connection ending on the loop (both woke the server's waiters; the second found none: TypeError).
            self.runtime.call(self._closed(self._server), timeout=5)

    @staticmethod
    async def _closed(server: asyncio.Server) -> None:
        server.close()
        await server.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            header, _ = await frame_read(reader)
            kind = header.get("kind")
            if kind == "convert":
                await self._convert(header, reader, writer)
            elif kind == "snapshot":
                writer.write(frame_encode(asdict(await self.runtime.snapshot_on_loop())))
            elif kind == "background":
                self.runtime.host.background_enabled = bool(header["enabled"])
                writer.write(frame_encode({}))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the caller left
        finally:
            writer.close()

    async def _convert(self, header: dict, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        source = source_decode(header["source"])
        priority = Priority[header["priority"]]
        conversion = asyncio.ensure_future(
            self.runtime.host.convert(source=source, read=self.reader_for(source), priority=priority)
        )
        if not header["wait"]:  # a prewarm: nobody waits, the result only fills the cache
            self._prewarms.add(conversion)
            conversion.add_done_callback(self._prewarm_finished)
            writer.write(frame_encode({}))
            return
        caller_gone = asyncio.ensure_future(reader.read(1))  # end of stream: the caller disconnected
        await asyncio.wait({conversion, caller_gone}, return_when=asyncio.FIRST_COMPLETED)
        if not conversion.done():
            conversion.cancel()  # detaches this reader only; the host stops the job if it was the last
            with contextlib.suppress(asyncio.CancelledError, OfficeError):
                await conversion
            return
        caller_gone.cancel()
        try:
            writer.write(preview_answer(conversion.result()))
        except OfficeError as error:
            writer.write(error_answer(error))

    def _prewarm_finished(self, conversion: asyncio.Future) -> None:
        self._prewarms.discard(conversion)
        self.prewarm_finished(conversion)

    @property
    def prewarms(self) -> int:
        """Prewarms handed over and not yet ended."""
        return len(self._prewarms)
