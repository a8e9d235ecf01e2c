"""`make bench-collab`: live editing on one document with real WebSocket clients.

The server is the real one (gunicorn + uvicorn, 2 processes as `make run` starts, production-like settings,
``processes.web_server``) on the benchmark's own database; its channel layer is the default (PostgreSQL).
The editors are ``collaboration.live.client.LiveClient``s (Python, y-websocket's protocol over a WebSocket,
pycrdt documents; ``scripts/bench/collab_clients.py``), each signed in as a user of its own (an editor of
the project) and connecting on its own, so the kernel puts it in either server process. They run in child
processes (asyncio: one for the two receivers, one for the other editors), not in this one, which prepares
the data, keeps the clock and takes the captures. The clients' CPU is printed with each phase (about half
a core at 50 editors: the machine's two cores are then nearly all in use).

Typing: 5 keystrokes a second per editor (gaps uniform in 0.1–0.3 s, each editor from a random phase),
each keystroke one Yjs update inserting one character, sent at once as y-websocket does. Every phase types
for 2 s of warm-up first, which counts for nothing (none with BENCH_WARMUP=0). Every period connects its
editors afresh, on a new document of ~20 KB of text.

Round trip (``collab_roundtrip_ms_p50|p99_editors_<N>``, N = 2, 10, 50): every character typed is a marker
naming its author and its number; a *receiver* (an editor like the others, which also keeps a note) notes
when each marker of another author reaches its document. A sample is (arrival in a receiver's document -
when the author typed it; LiveClient sends it at once), for every keystroke typed in the measured period
and every receiver but its author (one monotonic clock serves every process on the machine). Which process
an editor landed in is read from the kernel's socket table (the server process holding the other end of
its TCP connection), so samples split into same-process (relayed by the process that stored the update)
and cross-process (through the channel layer):

- N ≥ 3: two receivers, reconnected until they sit in different processes, plus N - 2 typing editors
  landing where they land; every keystroke of those makes one same-process and one cross-process sample.
  The receivers have a process of their own, so the N - 2 editors' frames cannot delay their timestamps.
- N = 2: both editors are receivers (each receives the other's keystrokes); a repetition types twice, once
  with the two in one process and once with them in different processes.

The headline figure pools both (about half of the samples each, as editors spread over two processes
would see); ``…_same_process`` and ``…_cross_process`` are each kind on its own. A marker a receiver never
sees fails the benchmark. Each period types until about BENCH_N (default 200) samples of each kind are due,
between 3 and 8 s (so N = 2 has ~80 of each kind per repetition).

Accepted updates (``collab_accepted_updates_per_s``): 10 editors on one document send single-character
updates open-loop (as y-websocket does: without waiting for acknowledgements) at a total offered rate, in
steps of 2 s (1.5 s when BENCH_N < 100) starting at 200/s and doubling, then two geometric bisections
between the last sustained rate and the first that was not. A rate is sustained when every update sent in
the step is acknowledged (ACKNOWLEDGED: stored) and 99 % of them within 500 ms of being sent; a backlog that
grows through a step is seconds behind by its end. The figure is the highest sustained rate (resolution
about ×1.19). The socket message rate limit (60/s, burst 300, against abusive clients) is raised on this
server so that it does not cap this phase; nothing else of the server's configuration is changed.

Fence hold (``collab_capture_fence_hold_ms_p50|p99_editors_10``): in a new project (the LaTeX starter plus
the document typed into), 10 editors type as above while this process takes max(20, BENCH_N or 60)
captures (``processing.submission.capture.project_capture``) 100–200 ms apart through the typing period, after one
unmeasured capture; the figure is the p50/p99 of their ``fence_seconds`` (of 60, p99 is the second
longest): the freeze transaction, including waiting for the fence and projecting the typed text under it.
``…_editors_0`` is as many captures of the same project just before, with nobody connected.

Targets on this machine: round trip p50 ≤ 30 ms and p99 ≤ 100 ms at 10 editors; fence hold p99 ≤ 50 ms
with 10 editors typing. Each figure is the median of BENCH_REPS (default 3) repetitions, with min–max.
A default run takes about 4 minutes; BENCH_N=20 BENCH_REPS=1 about one.
"""

import multiprocessing
import os
import random
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.harness import (
    BENCH_N,
    BENCH_REPS,
    BENCH_WARMUP,
    bench_database,
    django_setup,
    n_or,
    percentile,
    report,
)

RATE = 5.0  # keystrokes a second per editor
WARMUP_SECONDS = 2.0 if BENCH_WARMUP else 0.0  # the smoke runs (BENCH_WARMUP=0) type no warm-up
EDITOR_COUNTS = (2, 10, 50)
FENCE_EDITORS = 10
OFFERED_EDITORS = 10
OFFERED = {"start_rate": 200.0, "factor": 2.0, "refine": 2, "max_rate": 20_000.0, "ack_bound": 0.5,
           "warmup_seconds": WARMUP_SECONDS, "step_seconds": 2.0 if n_or(200) >= 100 else 1.5}  # fmt: skip
PERIOD_SECONDS = (3.0, 8.0)
TARGETS = {"collab_roundtrip_ms_p50_editors_10": 30, "collab_roundtrip_ms_p99_editors_10": 100,
           "collab_capture_fence_hold_ms_p99_editors_10": 50}  # fmt: skip
SERVER_ENV = {
    "DATABASE_POOL": "true",
    "QUIRE_LOG_LEVEL": "WARNING",
    "COLLAB_MAX_CONNECTIONS_PER_DOCUMENT": "256",
    "COLLAB_MESSAGES_PER_SECOND": "100000",
    "COLLAB_MESSAGE_BURST": "100000",
}
CHILD_TIMEOUT = 120.0
REPORTED: list[dict] = []


def figure(name: str, per_rep: list[float], **fields) -> None:
    REPORTED.append(report(name, per_rep, **fields))


@dataclass
class World:
    host: str
    port: int
    project_id: uuid.UUID
    owner_id: int
    usernames: list[str]  # one signed-in editor (a user of its own, an editor of the project) per index
    cookies: list[str]
    documents: int = 0

    def project_new(self, editors: int) -> None:
        """Move to a new project (LaTeX starter files) with the first ``editors`` users as its editors."""
        from access.services import member_set
        from workspace import services as workspace

        project = workspace.project_create(actor_id=self.owner_id, name="collab", project_type="latex", starter=True)
        for username in self.usernames[:editors]:
            member_set(actor_id=self.owner_id, project_id=project.pk, username=username, role="editor")
        self.project_id = project.pk

    def document(self, name: str) -> int:
        """A new text document of ~20 KB in the project; its file id."""
        from workspace import services as workspace

        self.documents += 1
        path, data = f"live/{name}-{self.documents}.tex", document_text().encode()
        file, _ = workspace.file_write(actor_id=self.owner_id, project_id=self.project_id, path=path, data=data)
        return file.pk

    def spec(self, file_id: int, editors: list[tuple[int, bool]], **fields) -> dict:
        return {
            "host": self.host,
            "port": self.port,
            "path": f"/ws/projects/{self.project_id}/documents/{file_id}",
            "editors": [(index, self.cookies[index], receiver) for index, receiver in editors],
            "seed": random.getrandbits(32),
            "mode": "type",
            "rate": RATE,
            **fields,
        }


def document_text(size: int = 20_000) -> str:
    rng = random.Random(7)
    words = [
        "the",
        "of",
        "manifold",
        "theorem",
        "lemma",
        "we",
        "show",
        "that",
        "bound",
        "proof",
        "holds",
        "every",
        "finite",
        "set",
        "\\emph{strict}",
        "$x_i$",
        "$n \\geq 2$",
        "and",
        "hence",
        "compact",
    ]
    lines = ["\\section{Bench}"]
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(" ".join(rng.choices(words, k=14)) + ("." if rng.random() < 0.8 else "\n"))
    return "\n".join(lines) + "\n"


def world_create(url: str, editors: int) -> World:
    from django.contrib.auth import get_user_model
    from django.test import Client

    users = get_user_model().objects
    owner = users.create_user(username=f"owner-{uuid.uuid4().hex[:8]}")  # no password: sessions come from force_login
    usernames, cookies = [], []
    for index in range(editors):
        user = users.create_user(username=f"editor-{index}-{uuid.uuid4().hex[:6]}")
        client = Client()
        client.force_login(user)
        usernames.append(user.username)
        cookies.append(client.cookies["sessionid"].value)
    host, port = url.removeprefix("http://").rsplit(":", 1)
    world = World(host, int(port), uuid.UUID(int=0), owner.pk, usernames, cookies)
    world.project_new(editors)
    return world


# --- a run of editor processes --------------------------------------------------------------------------


@dataclass
class Ran:
    placements: dict[int, int]  # editor index -> server pid
    results: list[dict]
    measure_from: float
    stop_at: float
    reconnections: int


def _receive(connection, process, expected: str):
    if not connection.poll(CHILD_TIMEOUT * (3 if expected == "done" else 1)):
        raise RuntimeError(f"an editor process sent nothing for {CHILD_TIMEOUT:.0f} s (waiting for {expected})")
    try:
        message = connection.recv()
    except EOFError:
        raise RuntimeError(f"an editor process ended (exit code {process.exitcode}) before {expected}") from None
    if message[0] != expected:
        raise RuntimeError(f"an editor process failed: {message[1:]}")
    return message


def editors_run(specs: list[dict], *, seconds: float | None = None, during=None) -> Ran:
    """Start one editor process per spec, let them type (a fixed period, or while ``during()`` runs, after
    the warm-up; a ramp runs its course), and collect what they saw."""
    from scripts.bench.collab_clients import editors_main

    context = multiprocessing.get_context("spawn")
    children = []
    try:
        for spec in specs:
            parent, child = context.Pipe()
            process = context.Process(target=editors_main, args=(child, spec), daemon=True)
            process.start()
            child.close()
            children.append((parent, process))
        placements, reconnections = {}, 0
        for parent, process in children:
            _, placed, again = _receive(parent, process, "ready")
            placements |= placed
            reconnections += again
        start = time.monotonic() + 0.2
        measure_from = start + WARMUP_SECONDS
        for parent, _ in children:
            parent.send(("go", start, measure_from))
        stop_at = measure_from  # a ramp stops on its own
        if seconds is not None:
            stop_at = measure_from + seconds
        elif during is not None:
            time.sleep(max(0.0, measure_from - time.monotonic()))
            during()
            stop_at = time.monotonic()
        for parent, _ in children:
            parent.send(("stop", stop_at))
        results = [_receive(parent, process, "done")[1] for parent, process in children]
        for _, process in children:
            process.join(timeout=30)
    finally:
        for parent, process in children:
            if process.is_alive():
                process.terminate()
            parent.close()
    for result in results:
        if result["closed"] or result["unsaved"]:
            raise RuntimeError(f"editors closed {result['closed']} or unacknowledged {result['unsaved']}")
    return Ran(placements, results, measure_from, stop_at, reconnections)


def roundtrips(ran: Ran) -> tuple[list[float], list[float]]:
    """(same-process, cross-process) round trips in ms of every marker typed in the measured period."""
    sends = {editor: sent for result in ran.results for editor, sent in result["sends"].items()}
    arrivals = {editor: seen for result in ran.results for editor, seen in result["arrivals"].items()}
    same, cross, lost = [], [], 0
    for receiver, seen in arrivals.items():
        for author, sent in sends.items():
            if author == receiver:
                continue
            samples = same if ran.placements[author] == ran.placements[receiver] else cross
            for number, at in sent:
                if ran.measure_from <= at <= ran.stop_at:
                    if (arrived := seen.get((author, number))) is None:
                        lost += 1
                    else:
                        samples.append((arrived - at) * 1000)
    if lost:
        raise RuntimeError(f"{lost} keystrokes never reached a receiver")
    return same, cross


def _spread(placements: dict[int, int]) -> str:
    counts = sorted((list(placements.values()).count(pid) for pid in set(placements.values())), reverse=True)
    return "+".join(map(str, counts)) if len(counts) > 1 else f"{counts[0]}+0"


# --- the phases -----------------------------------------------------------------------------------------


def roundtrip_phase(world: World, editors: int, per_kind: int) -> None:
    per_rep: dict[str, list[float]] = {}
    counts, spreads, cpus, reconnections = [], [], [], 0
    if editors == 2:
        seconds = min(max(per_kind / (2 * RATE), PERIOD_SECONDS[0]), PERIOD_SECONDS[1])
    else:
        seconds = min(max(per_kind / ((editors - 2) * RATE), PERIOD_SECONDS[0]), PERIOD_SECONDS[1])
    for _ in range(BENCH_REPS):
        same, cross = [], []
        if editors == 2:
            for want in ("same", "apart"):
                file_id = world.document(f"editors-{editors}")
                ran = editors_run([world.spec(file_id, [(0, True), (1, True)], want=want)], seconds=seconds)
                got_same, got_cross = roundtrips(ran)
                reconnections += ran.reconnections
                same += got_same
                cross += got_cross
                cpus.append(ran.results[0]["cpu_seconds"] / seconds)
            spreads.append("1+1 then 2+0")
        else:
            file_id = world.document(f"editors-{editors}")
            probe = world.spec(file_id, [(0, True), (1, True)], want="apart")
            load = world.spec(file_id, [(index, False) for index in range(2, editors)])
            ran = editors_run([probe, load], seconds=seconds)
            same, cross = roundtrips(ran)
            reconnections += ran.reconnections
            spreads.append(_spread(ran.placements))
            cpus.append(ran.results[1]["cpu_seconds"] / seconds)
        if not same or not cross:
            raise RuntimeError(f"no {'same' if not same else 'cross'}-process samples at {editors} editors")
        pooled = same + cross
        counts.append((len(pooled), len(same), len(cross)))
        for kind, samples in (("", pooled), ("_same_process", same), ("_cross_process", cross)):
            per_rep.setdefault(f"p50{kind}", []).append(percentile(samples, 0.5))
            per_rep.setdefault(f"p99{kind}", []).append(percentile(samples, 0.99))
    print(
        f"  [{editors} editors: {seconds:.1f} s measured per period; editors per server process "
        f"{', '.join(sorted(set(spreads)))} ({reconnections} reconnections to place the receivers); "
        f"the typing clients used {max(cpus):.0%} of a core at most]"
    )
    base = f"{editors} editors typing {RATE:g} keys/s each on one document, 2 server processes"
    for kind, label, index in (
        ("", "same- and cross-process pooled", 0),
        ("_same_process", "same process", 1),
        ("_cross_process", "across processes", 2),
    ):
        n = min(count[index] for count in counts)
        for stat in ("p50", "p99"):
            name = f"collab_roundtrip_ms_{stat}_editors_{editors}{kind}"
            figure(name, per_rep[f"{stat}{kind}"], unit="ms", n=n, config=f"{base}; {label}")


def throughput_phase(world: World) -> None:
    sustained, cpus, sent = [], [], []
    for _ in range(BENCH_REPS):
        spec = world.spec(
            world.document("offered"), [(index, False) for index in range(OFFERED_EDITORS)], mode="ramp", **OFFERED
        )
        ran = editors_run([spec])
        steps = ran.results[0]["steps"]
        good = [step for step in steps if step["sustained"]]
        best = max(good, key=lambda step: step["rate"]) if good else {"rate": 0.0, "p99_ms": 0.0, "sent": 0}
        sustained.append(best["rate"])
        sent.append(best["sent"])
        cpus.append(max(step["client_cpu"] for step in steps))
        ramp = ", ".join(f"{step['rate']:.0f}{'' if step['sustained'] else ' (not)'}" for step in steps)
        print(
            f"  [offered updates/s: {ramp}; the highest sustained had acknowledgement p99 {best['p99_ms']:.0f} ms; "
            f"the clients used {cpus[-1]:.0%} of a core at most]"
        )
    config = (
        f"{OFFERED_EDITORS} editors on one document sending open-loop, steps of {OFFERED['step_seconds']:g} s "
        f"x{OFFERED['factor']:g} then {OFFERED['refine']} bisections; sustained: every update acknowledged, "
        f"99% within {OFFERED['ack_bound'] * 1000:.0f} ms; 2 server processes"
    )
    figure("collab_accepted_updates_per_s", sustained, unit="updates/s", n=min(sent), config=config)


def fence_phase(world: World, captures: int) -> None:
    from processing.submission.capture import project_capture

    def captured(fences: list[float]) -> None:
        project_capture(project_id=world.project_id)  # not measured: warms this process's code and connection
        for _ in range(captures):
            time.sleep(random.uniform(0.1, 0.2))
            fences.append(project_capture(project_id=world.project_id).fence_seconds * 1000)

    per_rep: dict[str, list[float]] = {"p50": [], "p99": [], "idle_p50": [], "idle_p99": []}
    for _ in range(BENCH_REPS):
        world.project_new(FENCE_EDITORS)  # the starter's files and the one document typed into
        file_id = world.document("fence")
        idle: list[float] = []
        captured(idle)
        fences: list[float] = []
        spec = world.spec(file_id, [(index, False) for index in range(FENCE_EDITORS)])
        editors_run([spec], during=lambda fences=fences: captured(fences))
        for key, samples in (("", fences), ("idle_", idle)):
            per_rep[f"{key}p50"].append(percentile(samples, 0.5))
            per_rep[f"{key}p99"].append(percentile(samples, 0.99))
    typing = f"{FENCE_EDITORS} editors typing {RATE:g} keys/s each on one document of the project"
    for stat in ("p50", "p99"):
        figure(
            f"collab_capture_fence_hold_ms_{stat}_editors_{FENCE_EDITORS}",
            per_rep[stat],
            unit="ms",
            n=captures,
            config=f"{captures} captures 100–200 ms apart while {typing}",
        )
    for stat in ("p50", "p99"):
        figure(
            f"collab_capture_fence_hold_ms_{stat}_editors_0",
            per_rep[f"idle_{stat}"],
            unit="ms",
            n=captures,
            config=f"{captures} captures 100–200 ms apart, nobody connected",
        )


def targets(lines: list[dict]) -> None:
    for line in lines:
        if (target := TARGETS.get(line["figure"])) is not None:
            verdict = "met" if line["value"] <= target else "MISSED"
            print(f"  target {line['figure']} <= {target} ms: {verdict} ({line['value']:.1f} ms)")


def main() -> None:
    from scripts.bench.processes import web_server

    started = time.perf_counter()
    with bench_database() as _, tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        os.environ["QUIRE_STORAGE_DIR"] = str(directory / "storage")
        django_setup()
        env = {**SERVER_ENV, "QUIRE_STORAGE_DIR": str(directory / "storage")}
        print(
            f"Live editing benchmark (one document, 2 server processes; machine load {os.getloadavg()[0]:.1f} "
            f"on {os.cpu_count()} cores at the start)"
        )
        with web_server(env, workers=2, log=directory / "web.log") as url:
            world = world_create(url, max(EDITOR_COUNTS))
            print(f"  [set up in {time.perf_counter() - started:.0f} s]")
            phases = [(f"{editors} editors", roundtrip_phase, (world, editors, n_or(200))) for editors in EDITOR_COUNTS]
            phases += [
                ("offered rates", throughput_phase, (world,)),
                ("captures", fence_phase, (world, max(20, BENCH_N or 60))),
            ]
            for name, phase, arguments in phases:
                phase_started = time.perf_counter()
                phase(*arguments)
                print(f"  [{name}: {time.perf_counter() - phase_started:.0f} s]")
    targets(REPORTED)
    print(f"  [{time.perf_counter() - started:.0f} s in all; machine load {os.getloadavg()[0]:.1f} at the end]")


if __name__ == "__main__":
    main()
