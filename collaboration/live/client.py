"""A Python client of the live document socket: what the browser's editor does, for tests and benchmarks.

It keeps a pycrdt document in step with the server exactly as y-websocket does (sync step 1 on connect,
answering the server's sync step 1 with what it lacks, updates both ways), tracks what the server has
acknowledged, and records refusals and the close code. Edits are made with ``insert`` and ``delete``.
"""

import asyncio
import contextlib
import json
import ssl
from dataclasses import dataclass, field

from pycrdt import Doc, Text, create_awareness_message, create_sync_message, create_update_message
from pycrdt._sync import create_sync_step2_message  # not re-exported by pycrdt
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from collaboration.live import protocol
from collaboration.live.protocol import MessageType, SyncStep
from collaboration.ydoc import ROOT


@dataclass
class Closed:
    code: int | None
    reason: str


@dataclass
class LiveClient:
    url: str
    session_cookie: str
    origin: str
    tls: ssl.SSLContext | None = None  # for wss:// through a proxy whose CA is a deployment's own
    doc: Doc = field(default_factory=Doc)
    refusals: list[dict] = field(default_factory=list)
    closed: Closed | None = None
    synced: asyncio.Event = field(default_factory=asyncio.Event)
    acknowledged: dict[int, int] = field(default_factory=dict)  # client id → clock the server has stored
    presences: dict[int, dict] = field(default_factory=dict)
    _socket: ClientConnection | None = None
    _reader: asyncio.Task | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    def __post_init__(self):
        self.doc[ROOT] = Text()
        self._subscription = self.doc.observe(self._on_local_change)

    @property
    def response_headers(self):
        """The headers of the server's answer to the upgrade (a proxy may name the replica it chose)."""
        return self._socket.response.headers

    @property
    def text(self) -> str:
        return str(self.doc[ROOT])

    async def open(self) -> "LiveClient":
        self._socket = await connect(
            self.url,
            additional_headers={"Cookie": f"sessionid={self.session_cookie}"},
            origin=self.origin,
            max_size=None,
            compression=None,
            **({"ssl": self.tls} if self.tls is not None else {}),
        )
        self._reader = asyncio.get_running_loop().create_task(self._read())
        # A server that accepts and closes at once (a connection limit) is recorded by the reader as closed.
        await self._send_quietly(create_sync_message(self.doc))
        return self

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def send(self, frame: bytes) -> None:
        await self._socket.send(frame)

    # --- editing -------------------------------------------------------------------------------------------

    def insert(self, index: int, text: str) -> None:
        """Insert at a character index (pycrdt counts UTF-8 bytes; the conversion is done here)."""
        self.doc[ROOT].insert(len(self.text[:index].encode("utf-8")), text)

    def delete(self, start: int, end: int) -> None:
        current = self.text
        del self.doc[ROOT][len(current[:start].encode("utf-8")) : len(current[:end].encode("utf-8"))]

    def announce(self, client_clock: int, state: dict | None) -> asyncio.Future:
        entry = protocol.AwarenessEntry(self.doc.client_id, client_clock, json.dumps(state))
        return self.send(create_awareness_message(protocol.awareness_update([entry])))

    def _on_local_change(self, event) -> None:
        if getattr(self, "_applying_remote", False) or self._socket is None:
            return
        asyncio.get_running_loop().create_task(self._send_quietly(create_update_message(event.update)))

    async def _send_quietly(self, frame: bytes) -> None:
        with contextlib.suppress(ConnectionClosed):
            await self.send(frame)

    # --- waiting -------------------------------------------------------------------------------------------

    def saved(self) -> bool:
        """Has the server acknowledged every change made here?"""
        own = _state_vector(self.doc.get_state()).get(self.doc.client_id, 0)
        return self.acknowledged.get(self.doc.client_id, 0) >= own

    async def wait_until(self, condition, timeout: float = 10.0) -> None:
        async def waiting():
            async with self._changed:
                await self._changed.wait_for(lambda: condition() or self.closed is not None)

        await asyncio.wait_for(waiting(), timeout)
        if not condition():
            raise AssertionError(f"the socket closed first: {self.closed}")

    async def wait_closed(self, timeout: float = 10.0) -> Closed:
        await asyncio.wait_for(self._reader, timeout)
        return self.closed

    # --- receiving -----------------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for frame in self._socket:
                await self._handle(frame)
                async with self._changed:
                    self._changed.notify_all()
        except ConnectionClosed:
            pass
        finally:
            close = self._socket.close_code, self._socket.close_reason or ""
            self.closed = Closed(*close)
            async with self._changed:
                self._changed.notify_all()

    async def _handle(self, frame: bytes) -> None:
        kind = frame[0]
        if kind == MessageType.SYNC:
            step, payload = frame[1], _payload(frame, 2)
            if step == SyncStep.STEP1:
                await self.send(create_sync_step2_message(self.doc.get_update(payload)))
                return
            self._applying_remote = True
            try:
                self.doc.apply_update(payload)
            finally:
                self._applying_remote = False
            if step == SyncStep.STEP2:
                self.synced.set()
        elif kind == MessageType.ACKNOWLEDGED:
            for client, clock in _state_vector(_payload(frame, 1)).items():
                self.acknowledged[client] = max(clock, self.acknowledged.get(client, 0))
        elif kind == MessageType.REFUSED:
            self.refusals.append(json.loads(_payload(frame, 1)))
        elif kind == MessageType.AWARENESS:
            for entry in protocol.awareness_entries(_payload(frame, 1)):
                state = json.loads(entry.state_json)
                if state is None:
                    self.presences.pop(entry.client_id, None)
                else:
                    self.presences[entry.client_id] = state


def _payload(frame: bytes, offset: int) -> bytes:
    reader = protocol.Reader(frame[offset:])
    return reader.var_bytes()


def _state_vector(encoded: bytes) -> dict[int, int]:
    reader = protocol.Reader(encoded)
    return {reader.var_uint(): reader.var_uint() for _ in range(reader.var_uint())}
