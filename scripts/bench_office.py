"""make bench-office: cold ``soffice --convert-to`` against the warm conversion host.

Figures (median of the per-repetition p50s, with their min-max):
cold and warm conversion of a 1-page .docx and a 10-slide .pptx and their
ratio, a cache hit, throughput of 2 slots, and how long a small document waits
behind an abandoned large one compared with a replacement slot's start-up.
Scale with BENCH_N (samples per repetition, default 20) and BENCH_REPS (default 2).
Needs LibreOffice, python3-uno and the dev dependencies; no database.
"""

import asyncio
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from office.host import HostLimits, Priority, SourceRef  # noqa: E402
from office.libreoffice import EngineConfig, LibreOfficeEngine  # noqa: E402
from office.runtime import HostRuntime  # noqa: E402
from office.sandbox import sandbox_unavailable_reason  # noqa: E402
from office.slots import Slot, SlotCommand  # noqa: E402
from tests.office.documents import docx_with, pptx_with  # noqa: E402

N = int(os.environ.get("BENCH_N", "20"))
REPS = int(os.environ.get("BENCH_REPS", "2"))
PROJECT = uuid.UUID(int=0)
figures: list[dict] = []


def report(figure: str, per_rep: list[float], unit: str, n: int, config: str) -> float:
    value = statistics.median(per_rep)
    line = {
        "figure": figure,
        "value": round(value, 3),
        "unit": unit,
        "n": n,
        "reps": len(per_rep),
        "min": round(min(per_rep), 3),
        "max": round(max(per_rep), 3),
        "config": config,
    }
    figures.append(line)
    print(f"  {figure:<38} {value:>10.2f} {unit:<7} min {min(per_rep):.2f}  max {max(per_rep):.2f}  ({config})")
    return value


def p50(samples: list[float]) -> float:
    return statistics.median(samples)


def request(data: bytes, path: str, priority: Priority = Priority.FOREGROUND) -> dict:
    version = hashlib.sha256(data).hexdigest()

    async def read(max_bytes: int) -> tuple[bytes, str]:
        return data, version

    return {"source": SourceRef(PROJECT, path, version, len(data)), "read": read, "priority": priority}


def cold_ms(document: Path, work: Path) -> float:
    profile = (work / "cold-profile").as_uri()
    started = time.perf_counter()
    subprocess.run(
        [
            "soffice",
            "--headless",
            f"-env:UserInstallation={profile}",
            "--convert-to",
            "pdf",
            "--outdir",
            str(work / "cold-out"),
            str(document),
        ],
        check=True,
        capture_output=True,
    )
    return (time.perf_counter() - started) * 1000


def warm_ms(runtime: HostRuntime, data: bytes, path: str) -> float:
    started = time.perf_counter()
    runtime.call(runtime.host.convert(**request(data, path)))
    return (time.perf_counter() - started) * 1000


def bench_cold_vs_warm(runtime: HostRuntime, work: Path) -> None:
    kinds = {
        "docx": (".docx", lambda i: docx_with(["Quire", "bench", f"run{i}"])),
        "pptx": (".pptx", lambda i: pptx_with(["Quire", "bench", f"run{i}"], slides=10)),
    }
    for kind, (extension, make) in kinds.items():
        sample = work / f"sample{extension}"
        sample.write_bytes(make(0))
        cold_ms(sample, work)  # warm-up: creates the profile the cold runs reuse
        warm_ms(runtime, make(-1), f"warmup/{kind}{extension}")
        cold_reps, warm_reps = [], []
        for rep in range(REPS):
            cold_reps.append(p50([cold_ms(sample, work) for _ in range(N)]))
            documents = [make(rep * N + i) for i in range(N)]  # distinct bytes: never a cache hit
            warm_reps.append(
                p50([warm_ms(runtime, data, f"r{rep}/{i}{extension}") for i, data in enumerate(documents)])
            )
        slides = ", 10 slides" if kind == "pptx" else ", 1 page"
        report(f"office_cold_ms_p50_{kind}", cold_reps, "ms", N, f"soffice --convert-to{slides}")
        report(f"office_warm_ms_p50_{kind}", warm_reps, "ms", N, f"host, 2 warm slots{slides}")
        ratios = [w / c for w, c in zip(warm_reps, cold_reps, strict=True)]
        report(
            f"office_warm_cold_ratio_{kind}",
            ratios,
            "ratio",
            N,
            "warm p50 / cold p50, target <= 0.25",
        )


def bench_cache_hit(runtime: HostRuntime) -> None:
    data = docx_with(["cached"])
    warm_ms(runtime, data, "cached.docx")
    reps = [p50([warm_ms(runtime, data, "cached.docx") for _ in range(N * 10)]) for _ in range(REPS)]
    report("office_cache_hit_ms_p50", reps, "ms", N * 10, "ready PDF, caller on another thread (as a view)")


def bench_throughput(runtime: HostRuntime) -> None:
    reps = []
    for rep in range(REPS):
        documents = [docx_with(["throughput", f"r{rep}d{i}"]) for i in range(N)]

        async def all_at_once(docs=documents, rep=rep):
            host = runtime.host
            await asyncio.gather(*(host.convert(**request(d, f"t{rep}/{i}.docx")) for i, d in enumerate(docs)))

        started = time.perf_counter()
        runtime.call(all_at_once())
        reps.append(N / (time.perf_counter() - started))
    report("office_throughput_docs_per_s", reps, "docs/s", N, "2 slots, 1-page .docx, all submitted at once")


def bench_abandoned(work: Path) -> None:
    """1 slot: a large conversion is abandoned by its only reader; a small document waits behind it."""
    runtime = HostRuntime(
        engine_factory=lambda: LibreOfficeEngine(EngineConfig(slots=1)),
        limits=HostLimits(max_running=1),
        background_enabled=True,
    )
    large = docx_with(["large", "document"] * 20, paragraphs=6000)
    trials = max(3, N // 4)
    try:
        warm_ms(runtime, docx_with(["warm"]), "warm.docx")
        waits = [
            p50([runtime.call(_behind_abandoned(runtime, large, rep, i)) for i in range(trials)]) for rep in range(REPS)
        ]
    finally:
        runtime.close()
    starts = [p50([_slot_start_ms(work) for _ in range(trials)]) for _ in range(REPS)]
    report("office_behind_abandoned_ms_p50", waits, "ms", trials, "1 slot: abandon large, then small converts")
    report("office_slot_start_ms_p50", starts, "ms", trials, "one replacement slot (sandbox, bridge, office)")
    ratios = [w / s for w, s in zip(waits, starts, strict=True)]
    report(
        "office_behind_abandoned_start_ratio",
        ratios,
        "ratio",
        trials,
        "wait incl. the small conversion / slot start-up",
    )


async def _behind_abandoned(runtime: HostRuntime, large: bytes, rep: int, trial: int) -> float:
    host = runtime.host
    abandoned = asyncio.create_task(host.convert(**request(large + bytes([trial]), f"big{rep}-{trial}.docx")))
    while host.converting == 0:
        await asyncio.sleep(0.005)  # a benchmark may poll: wait until the large file is with LibreOffice
    small = asyncio.create_task(host.convert(**request(docx_with([f"small{rep}-{trial}"]), f"s{rep}-{trial}.docx")))
    while host.queued(Priority.FOREGROUND) == 0:
        await asyncio.sleep(0)
    started = time.perf_counter()
    abandoned.cancel()
    await small
    return (time.perf_counter() - started) * 1000


def _slot_start_ms(work: Path) -> float:
    async def once() -> float:
        directory = Path(tempfile.mkdtemp(dir=work))
        command = SlotCommand("/usr/bin/python3", "soffice", sandbox_unavailable_reason() is None, 60.0)
        started = time.perf_counter()
        slot = await Slot.launch(index=0, directory=directory, name=f"bench-{directory.name}", command=command)
        elapsed = (time.perf_counter() - started) * 1000
        await slot.kill()
        return elapsed

    return asyncio.run(once())


def main() -> None:
    print(f"Office preview benchmark: BENCH_N={N} BENCH_REPS={REPS}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="quire-bench-office-") as scratch:
        work = Path(scratch)
        runtime = HostRuntime(
            engine_factory=lambda: LibreOfficeEngine(EngineConfig(slots=2)),
            limits=HostLimits(max_running=2),
            background_enabled=True,
        )
        try:
            bench_cold_vs_warm(runtime, work)
            bench_cache_hit(runtime)
            bench_throughput(runtime)
        finally:
            runtime.close()
        bench_abandoned(work)
    for line in figures:
        print("BENCH " + json.dumps(line))


if __name__ == "__main__":
    main()
