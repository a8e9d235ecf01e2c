"""Benchmark: LaTeX builds through the worker's processor, in the bubblewrap sandbox and without it.

Measures the processor path without Core, exactly as the agent runs it (``LatexProcessor.run``:
copy the bundle's files, latexmk with the processor's own options — nonstopmode without
``-halt-on-error``, ``-synctex=1`` — read the log, publish the PDF and the SyncTeX data, count
the words with texcount), with the limits an agent derives from Core's claim (``claim_limits``),
for the starter document and for a generated 20-page document with a table of contents. Each
document is built once to warm up, then ``BENCH_N`` times per repetition with each executor,
interleaved so both sides see the same machine; ``BENCH_REPS`` repetitions. A figure's value is
the median of the repetitions' medians, and min/max are the lowest and highest repetition
median. ``bwrap_overhead_ms_p50`` is the sandbox's median minus the plain subprocess's median.
``BENCH_COMPILERS`` (default ``pdflatex``) adds engines.

Prints a table, then one ``BENCH {json}`` line per figure. The functions are importable
(``measure_builds``, ``write_bundle``, ``claim_limits``, ``STARTER_DOCUMENT``, ``twenty_page_document``).
Needs root (the sandbox gives each build its own uid). ``make bench-latex`` sets the same processor
against the full path on the very bundles Core captured (``scripts/bench/builds.py``).
"""

import hashlib
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from processing.kernel.configuration import Limits as CoreLimits
from quire_worker.contracts import Executor, Limits
from quire_worker.job_run import _limits_for
from quire_worker.processors.latex.compile_pdf import LatexProcessor
from quire_worker.sandbox import BwrapExecutor, LocalExecutor
from workspace.starters import LATEX_MAIN

STARTER_DOCUMENT = LATEX_MAIN  # the demo project every new LaTeX project starts from
PARAGRAPH = (
    "Quire keeps every project in a frozen snapshot, builds it in a sandbox of its own and "
    "publishes the result only once Core has checked it. "
) * 6


def twenty_page_document() -> str:
    """A table of contents on page 1, then 19 sections of a page each: 20 pages in all."""
    sections = [f"\\section{{Section {n}}}\n{PARAGRAPH}\n\n{PARAGRAPH}\n\\newpage" for n in range(1, 20)]
    lines = [r"\documentclass[11pt]{article}", r"\begin{document}", r"\tableofcontents\newpage", *sections]
    return "\n".join([*lines, r"\end{document}", ""])


def write_bundle(input_dir: Path, files: dict[str, str], *, compiler: str, entry_path: str = "main.tex") -> None:
    """An unpacked ``project-bundle/v1`` as the agent hands it to a processor."""
    records = []
    for path, text in sorted(files.items()):
        data = text.encode()
        (input_dir / "files" / path).parent.mkdir(parents=True, exist_ok=True)
        (input_dir / "files" / path).write_bytes(data)
        records.append({"path": path, "kind": "document", "length": len(data), "sha256": _sha256(data)})
    manifest = {
        "schema": "project-bundle/v1",
        "project_type": "latex",
        "entry_path": entry_path,
        "settings": {"compiler": compiler},
        "workspace_version": 1,
        "content_generation": 1,
        "source_epoch": 1_700_000_000,
        "files": records,
    }
    (input_dir / "manifest.json").write_text(json.dumps(manifest, sort_keys=True))


def claim_limits(core: CoreLimits | None = None) -> Limits:
    """The limits an agent runs a build with: derived from the claim, as ``job_run`` derives them (a deployment's
    ``wall_seconds`` also bounds the CPU seconds), not the executor's defaults."""
    core = core or CoreLimits()
    return _limits_for(
        {
            "limits": {
                "wall_seconds": core.wall_seconds,
                "artifact_bytes": core.artifact_bytes,
                "diagnostic_bytes": core.diagnostic_bytes,
            }
        }
    )


def build_ms(processor: LatexProcessor, job_dir: Path, executor: Executor, limits: Limits | None = None) -> float:
    """Milliseconds of one processor run on the bundle in ``job_dir/input``."""
    output_dir = Path(tempfile.mkdtemp(prefix="output-", dir=job_dir))
    started = time.perf_counter()
    processor.run(
        input_dir=job_dir / "input",
        output_dir=output_dir,
        request={},
        limits=limits or claim_limits(),
        cancel=threading.Event(),
        executor=executor,
    )
    elapsed = (time.perf_counter() - started) * 1000
    for output in output_dir.iterdir():
        output.unlink()
    output_dir.rmdir()
    return elapsed


def measure_builds(
    files: dict[str, str], *, compiler: str, executors: dict[str, Executor], n: int, reps: int
) -> dict[str, list[float]]:
    """Per executor, the median build time (ms) of each repetition of ``n`` interleaved builds."""
    processor, limits = LatexProcessor(), claim_limits()
    with tempfile.TemporaryDirectory(prefix="bench-latex-") as scratch:
        job_dir = Path(scratch)
        (job_dir / "input").mkdir()
        write_bundle(job_dir / "input", files, compiler=compiler)
        for executor in executors.values():
            build_ms(processor, job_dir, executor, limits)  # warm-up: page cache, fonts, formats
        medians: dict[str, list[float]] = {name: [] for name in executors}
        for _ in range(reps):
            samples: dict[str, list[float]] = {name: [] for name in executors}
            for _ in range(n):
                for name, executor in executors.items():
                    samples[name].append(build_ms(processor, job_dir, executor, limits))
            for name, values in samples.items():
                medians[name].append(statistics.median(values))
    return medians


def bench_line(figure: str, rep_medians: list[float], *, n: int, reps: int, config: str) -> str:
    summary = {
        "figure": figure,
        "value": round(statistics.median(rep_medians), 1),
        "unit": "ms",
        "n": n,
        "reps": reps,
        "min": round(min(rep_medians), 1),
        "max": round(max(rep_medians), 1),
        "config": config,
    }
    return "BENCH " + json.dumps(summary)


def main() -> None:
    n = int(os.environ.get("BENCH_N", "20"))
    reps = int(os.environ.get("BENCH_REPS", "3"))
    compilers = os.environ.get("BENCH_COMPILERS", "pdflatex").split(",")
    documents = {
        "demo": {"main.tex": STARTER_DOCUMENT},
        "20 pages with toc": {"main.tex": twenty_page_document()},
    }
    executors: dict[str, Executor] = {"bwrap": BwrapExecutor(), "local": LocalExecutor()}
    lines = []
    print(f"{'document':<20} {'compiler':<9} {'bwrap ms':>9} {'plain ms':>9} {'overhead ms':>12}")
    for compiler in compilers:
        for document, files in documents.items():
            medians = measure_builds(files, compiler=compiler, executors=executors, n=n, reps=reps)
            overhead = [sandboxed - plain for sandboxed, plain in zip(medians["bwrap"], medians["local"], strict=True)]
            print(
                f"{document:<20} {compiler:<9} {statistics.median(medians['bwrap']):>9.1f} "
                f"{statistics.median(medians['local']):>9.1f} {statistics.median(overhead):>12.1f}",
                flush=True,
            )
            for executor in ("bwrap", "local"):
                config = f"{document}, {compiler}, {executor}"
                lines.append(bench_line("latex_raw_ms_p50", medians[executor], n=n, reps=reps, config=config))
            config = f"{document}, {compiler}, bwrap minus local"
            lines.append(bench_line("bwrap_overhead_ms_p50", overhead, n=n, reps=reps, config=config))
    print("\n".join(lines))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


if __name__ == "__main__":
    main()
