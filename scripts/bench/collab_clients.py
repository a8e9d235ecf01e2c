"""The editors of `make bench-collab`: clients of the live document socket, many to a process.

Each editor is a ``collaboration.live.client.LiveClient``, the project's own Python client, which speaks
what the browser's editor speaks (y-websocket's sync protocol over a WebSocket, plus Quire's ACKNOWLEDGED
and REFUSED; ``collaboration.live.protocol``) and keeps a pycrdt document in step, applying every update
it is sent. Forty-eight of them typing in one process take about half a core of this machine at 50
editors (the benchmark prints it), which is why they get a process apart from the two receivers. Every
keystroke is one Yjs update of one character, sent at once, typed after the editor's previous one (its
cursor follows what others insert before it), so editors do not all type at one spot.

What the benchmark adds: every character typed is a *marker* naming its author and its number, and a
*receiver* notes the moment each marker of another author reaches its document; the time each keystroke
was typed; and, from the kernel's socket table, which server process holds each editor's connection.

A run is one child process (``editors_main``), driven by its parent over a pipe: it connects its editors
and reports where each landed ("ready"), types from the "go" until the "stop" (or runs a ramp of offered
rates on its own), waits until the server has acknowledged every keystroke (and, with receivers, until
relayed markers stop arriving), and reports what it saw ("done"). Times are ``time.monotonic()``, one
clock for every process on the machine.
"""

import asyncio
import contextlib
import os
import random
import time
from collections import deque

from collaboration.live.client import LiveClient

MARKERS_PER_EDITOR = 2600  # 50 editors × 2600 markers fit the two supplementary private use planes
CONNECT_TIMEOUT = 20.0
DRAIN_TIMEOUT = 15.0


# --- keystroke markers: every typed character names its author and its number -------------------------


def marker(editor: int, seq: int) -> str:
    if seq >= MARKERS_PER_EDITOR:
        raise ValueError("too many keystrokes for the markers of one run")
    index = editor * MARKERS_PER_EDITOR + seq
    return chr(0xF0000 + index) if index < 0xFFFE else chr(0x100000 + index - 0xFFFE)


def marker_decode(char: str) -> tuple[int, int] | None:
    code = ord(char)
    if 0xF0000 <= code < 0xFFFFE:
        index = code - 0xF0000
    elif 0x100000 <= code < 0x10FFFE:
        index = code - 0x100000 + 0xFFFE
    else:
        return None
    return divmod(index, MARKERS_PER_EDITOR)


# --- an editor ------------------------------------------------------------------------------------------


class Editor:
    """A LiveClient and what the benchmark notes of it."""

    def __init__(self, index: int, cookie: str, *, receiver: bool, spec: dict, rng: random.Random):
        self.index, self.cookie, self.receiver, self.rng = index, cookie, receiver, rng
        origin = f"http://{spec['host']}:{spec['port']}"
        self.client = LiveClient(f"ws://{spec['host']}:{spec['port']}{spec['path']}", cookie, origin)
        self.text = self.client.doc["content"]  # collaboration.ydoc.ROOT, made by LiveClient
        self._subscription = self.text.observe(self._on_text)
        self._typing = False
        self.cursor = 0  # where this editor types, after its last character: a UTF-8 offset (pycrdt's index)
        self.clock = 0  # own Yjs clock typed (UTF-16 units)
        self.typed = 0
        self.sends: list[tuple[int, float]] = []  # (marker number, when typed)
        self.arrivals: dict[tuple[int, int], float] = {}  # (author, marker number) -> when it arrived here
        self.last_arrival = 0.0
        self.local_port = 0

    async def open(self) -> None:
        await asyncio.wait_for(self.client.open(), CONNECT_TIMEOUT)
        try:
            await self.client.wait_until(self.client.synced.is_set, timeout=CONNECT_TIMEOUT)
        except AssertionError:
            raise ConnectionError(f"editor {self.index} was closed on connecting: {self.client.closed}") from None
        self.local_port = self.client._socket.local_address[1]  # LiveClient's connection (websockets)
        synced = self.client.text  # a place of its own in what it synced
        self.cursor = len(synced[: self.rng.randrange(len(synced) + 1)].encode("utf-8"))

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.client.close()

    @property
    def closed(self):
        return self.client.closed

    @property
    def acked(self) -> int:
        return self.client.acknowledged.get(self.client.doc.client_id, 0)

    def saved(self) -> bool:
        return self.acked >= self.clock

    def keystroke(self, char: str | None = None) -> None:
        """Type one character after the last this editor typed (a marker naming this editor unless ``char``);
        LiveClient sends the update."""
        number = self.typed
        char = char or marker(self.index, number)
        self._typing = True
        try:
            self.text.insert(self.cursor, char)
        finally:
            self._typing = False
        self.cursor += len(char.encode("utf-8"))
        self.clock += len(char.encode("utf-16-le")) // 2
        self.typed += 1
        self.sends.append((number, time.monotonic()))

    def _on_text(self, event) -> None:
        """Others' changes: move the cursor past what they put before it; a receiver notes their markers
        (once synced: the sync's catch-up holds nothing typed since the editors connected)."""
        if self._typing:
            return
        noting = self.receiver and self.client.synced.is_set()
        position, now = 0, time.monotonic()
        for part in event.delta:
            if "retain" in part:
                position += part["retain"]
            elif "delete" in part:
                if position < self.cursor:
                    self.cursor -= min(part["delete"], self.cursor - position)
            elif isinstance(inserted := part.get("insert"), str):
                size = len(inserted.encode("utf-8"))
                if position < self.cursor:
                    self.cursor += size
                position += size
                if noting:
                    for char in inserted:
                        if (found := marker_decode(char)) is not None and found[0] != self.index:
                            self.arrivals.setdefault(found, now)
                            self.last_arrival = now


# --- which server process holds a socket -----------------------------------------------------------------


def server_processes(server_port: int, client_ports: set[int]) -> dict[int, int]:
    """client port -> pid of the server process holding the other end (from the kernel's socket table)."""
    inodes: dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                local, remote = int(fields[1].rsplit(":", 1)[1], 16), int(fields[2].rsplit(":", 1)[1], 16)
                if local == server_port and remote in client_ports:
                    inodes[f"socket:[{fields[9]}]"] = remote
    found: dict[int, int] = {}
    for pid in (entry for entry in os.listdir("/proc") if entry.isdigit()):
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    if (port := inodes.get(os.readlink(f"/proc/{pid}/fd/{fd}"))) is not None:
                        found[port] = int(pid)
        if len(found) == len(inodes):
            break
    return found


# --- a run ---------------------------------------------------------------------------------------------


async def _connected(spec: dict, index: int, cookie: str, receiver: bool, rng: random.Random) -> Editor:
    editor = Editor(index, cookie, receiver=receiver, spec=spec, rng=rng)
    await editor.open()
    return editor


async def _placed(spec: dict, editors: list[Editor], rng: random.Random) -> int:
    """Reconnect the second editor until the first two sit in the same or in different server processes
    (``spec["want"]``: "same", "apart"); returns how many reconnections it took."""
    want = spec.get("want")
    if want is None:
        return 0
    for attempt in range(60):
        pids = server_processes(spec["port"], {editors[0].local_port, editors[1].local_port})
        first, second = pids.get(editors[0].local_port), pids.get(editors[1].local_port)
        if first is not None and second is not None and (first == second) == (want == "same"):
            return attempt
        await editors[1].close()
        editors[1] = await _connected(spec, editors[1].index, editors[1].cookie, editors[1].receiver, rng)
    raise RuntimeError(f"two editors would not land {want} after 60 connections")


async def _typing(editor: Editor, rate: float, start: float, stopping: dict, rng: random.Random) -> None:
    """About ``rate`` keystrokes a second: gaps uniform in [0.5, 1.5] / rate, from a random phase."""
    await asyncio.sleep(max(0.0, start - time.monotonic()) + rng.uniform(0, 1 / rate))
    while editor.closed is None and (stopping["at"] is None or time.monotonic() < stopping["at"]):
        editor.keystroke()
        await asyncio.sleep(rng.uniform(0.5, 1.5) / rate)


class Offered:
    """Open-loop keystrokes at a total rate, spread round-robin over the editors (as y-websocket sends:
    at once, whatever is still unacknowledged), and how long each waited for its ACKNOWLEDGED (looked
    for every 2 ms)."""

    LETTERS = "abcdefghijklmnopqrstuvwxyz"

    def __init__(self, editors: list[Editor]):
        self.editors = editors
        self.outstanding = {editor.index: deque() for editor in editors}  # (clock once stored, when sent)
        self.latencies: list[float] = []
        self._watching = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            now = time.monotonic()
            for editor in self.editors:
                waiting, acked = self.outstanding[editor.index], editor.acked
                while waiting and waiting[0][0] <= acked:
                    self.latencies.append(now - waiting.popleft()[1])
            await asyncio.sleep(0.002)

    def stop(self) -> None:
        self._watching.cancel()

    def backlog(self) -> int:
        return sum(len(waiting) for waiting in self.outstanding.values())

    async def step(self, rate: float, seconds: float, *, bound: float) -> dict:
        """Offer ``rate`` updates/s for ``seconds``, then wait (at most ``bound`` + 2 s) for their
        acknowledgements."""
        self.latencies = []
        started, sent, cpu_from = time.monotonic(), 0, time.process_time()
        while (now := time.monotonic()) < started + seconds:
            for _ in range(int((now - started) * rate) - sent):
                editor = self.editors[sent % len(self.editors)]
                editor.keystroke(self.LETTERS[editor.typed % 26])
                self.outstanding[editor.index].append((editor.clock, editor.sends[-1][1]))
                sent += 1
            await asyncio.sleep(0.004)
        deadline = time.monotonic() + bound + 2.0
        while self.backlog() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        unacknowledged = self.backlog()
        late = sum(latency > bound for latency in self.latencies) + unacknowledged
        return {
            "rate": rate,
            "sent": sent,
            "acknowledged": len(self.latencies),
            "unacknowledged": unacknowledged,
            "p99_ms": _percentile(self.latencies, 0.99) * 1000,
            "late": late,
            "client_cpu": (time.process_time() - cpu_from) / (time.monotonic() - started),
            "sustained": sent > 0 and unacknowledged == 0 and late <= 0.01 * sent,
        }

    async def drained(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self.backlog() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        return not self.backlog()


async def _ramp(editors: list[Editor], spec: dict) -> list[dict]:
    """Offered rates rising by ``factor`` from ``start_rate`` until one is not sustained, then ``refine``
    bisections (geometric) between the last sustained rate and the first that was not."""
    offered, bound, seconds = Offered(editors), spec["ack_bound"], spec["step_seconds"]
    await offered.step(spec["start_rate"], spec["warmup_seconds"], bound=bound)  # warm-up, not reported
    steps: list[dict] = []
    rate, good, bad = spec["start_rate"], None, None
    while bad is None and rate <= spec["max_rate"]:
        steps.append(await offered.step(rate, seconds, bound=bound))
        if steps[-1]["sustained"]:
            good, rate = rate, rate * spec["factor"]
        else:
            bad = rate
    for _ in range(spec["refine"] if good is not None and bad is not None else 0):
        if not await offered.drained(DRAIN_TIMEOUT):
            break
        rate = (good * bad) ** 0.5
        steps.append(await offered.step(rate, seconds, bound=bound))
        good, bad = (rate, bad) if steps[-1]["sustained"] else (good, rate)
    await offered.drained(DRAIN_TIMEOUT)
    offered.stop()
    return steps


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))] if ordered else float("nan")


async def _run(conn, spec: dict) -> None:
    loop = asyncio.get_running_loop()
    rng = random.Random(spec["seed"])
    gate = asyncio.Semaphore(8)

    async def connect(index: int, cookie: str, receiver: bool) -> Editor:
        async with gate:
            return await _connected(spec, index, cookie, receiver, rng)

    editors = list(await asyncio.gather(*(connect(*editor) for editor in spec["editors"])))
    reconnections = await _placed(spec, editors, rng)
    pids = server_processes(spec["port"], {editor.local_port for editor in editors})
    conn.send(("ready", {editor.index: pids.get(editor.local_port) for editor in editors}, reconnections))

    _, start, measure_from = await loop.run_in_executor(None, conn.recv)
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    if spec["mode"] == "ramp":
        cpu_from = time.process_time()
        steps = await _ramp(editors, spec)
        conn.send(("done", {"steps": steps, "cpu_seconds": time.process_time() - cpu_from, **_health(editors)}))
        await asyncio.gather(*(editor.close() for editor in editors))
        return
    stopping: dict = {"at": None}
    typists = [loop.create_task(_typing(editor, spec["rate"], start, stopping, rng)) for editor in editors]
    await asyncio.sleep(max(0.0, measure_from - time.monotonic()))
    cpu_from = time.process_time()
    _, stop_at = await loop.run_in_executor(None, conn.recv)
    await asyncio.sleep(max(0.0, stop_at - time.monotonic()))
    stopping["at"] = stop_at
    cpu_seconds = time.process_time() - cpu_from
    await asyncio.gather(*typists)

    deadline = time.monotonic() + DRAIN_TIMEOUT
    while time.monotonic() < deadline and not all(editor.saved() or editor.closed for editor in editors):
        await asyncio.sleep(0.02)
    if any(editor.receiver for editor in editors):  # relayed markers: until a second passes without one
        while time.monotonic() < deadline:
            latest = max([stop_at, *(editor.last_arrival for editor in editors)])
            if time.monotonic() - latest > 1.0:
                break
            await asyncio.sleep(0.1)
    conn.send(
        (
            "done",
            {
                "sends": {editor.index: editor.sends for editor in editors},
                "arrivals": {editor.index: editor.arrivals for editor in editors if editor.receiver},
                "typed": sum(editor.typed for editor in editors),
                "cpu_seconds": cpu_seconds,
                **_health(editors),
            },
        )
    )
    await asyncio.gather(*(editor.close() for editor in editors))


def _health(editors: list[Editor]) -> dict:
    unsaved = {editor.index: editor.clock - editor.acked for editor in editors if not editor.saved()}
    return {"unsaved": unsaved, "closed": {e.index: (e.closed, e.client.refusals) for e in editors if e.closed}}


def editors_main(conn, spec: dict) -> None:
    """A child process's life: ``spec`` names the server, the document, the editors and how they type."""
    try:
        asyncio.run(_run(conn, spec))
    except BaseException as exc:
        conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        raise
    finally:
        conn.close()
