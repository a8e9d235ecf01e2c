"""`make bench-latex`: project builds (LaTeX and Typst) by the full path against the processor alone,
a reuse hit, and cancel latency. One database, one web server (2 processes) and one agent (1 slot per
operation, bubblewrap) serve all of it.

For the LaTeX demo document (the starter) and a 20-page document with a table of contents:
  latex_raw_ms_p50_<doc>           the agent's processor alone in bubblewrap (latexmk -synctex=1, texcount)
  latex_full_ms_p50_<doc>          API submit → capture → queue → agent → upload → finalize → PDF downloaded
  latex_overhead_ms_p50_<doc>      full - raw of the same build (target ≤ 150 ms)
  latex_full_vs_raw_ratio_<doc>    full p50 / raw p50
  latex_phase_ms_p50_<phase>_<doc> where the full path's time goes: submit_to_queued, queued_to_claimed,
                                   claimed_to_first_output (the processor runs here), between_outputs,
                                   last_output_to_delivered, delivered_to_succeeded, succeeded_to_seen,
                                   pdf_download
  reuse_hit_ms_p50                 an unchanged resubmission answered as a succeeded job (cache hit)
The same for the Typst starter and a 20-page Typst document (``typst_…``, ``scripts.bench.builds_typst``),
then ``cancel_latency_ms_p50`` / ``_p99`` (``scripts.bench.cancel``).

How raw and full are made comparable (``scripts.bench.builds``): each full build is paired with a raw build
of the very bundle it captures (right before it or right after it, in turn), with the processor, executor
and limits the agent uses, timed around ``processor.run`` as the agent's ``processor_ms`` is; the first
repetition warms both sides up and is dropped.
Each full build edits a comment first, so it is never a reuse hit; a LaTeX build starts warm from the previous
one, and its raw twin is given the same warm start (the job's recorded one is checked against it).
BENCH_N builds (default 20) per repetition and document, BENCH_N cancels per repetition; BENCH_REPS
repetitions (default 3).
The client waits for each job's end with ``GET /v1/processing/jobs/{id}?wait=20`` (answered when the job ends,
woken by NOTIFY); ``BENCH_POLL_SECONDS`` set instead polls at that interval, as a client without waits would.
"""

import statistics
import time

from scripts.bench.builds import (
    LATEX,
    OVERHEAD_TARGET_MS,
    TYPST,
    RawSide,
    author,
    build_service,
    paired_builds,
    report_paired,
    submit,
    target_line,
)
from scripts.bench.harness import BENCH_REPS, n_or, report


def latex_edit(source: str, tag: str) -> str:
    return source.replace(r"\begin{document}", f"% build {tag}\n\\begin{{document}}", 1)


def _reuse_ms(client, project_id: str, n: int) -> list[float]:
    medians = []
    for _ in range(BENCH_REPS):
        samples = []
        for _ in range(n):
            started = time.perf_counter()
            job = submit(client, project_id)
            samples.append((time.perf_counter() - started) * 1000)
            if not job["cache_hit"]:
                raise RuntimeError("expected a reuse hit")
        medians.append(statistics.median(samples))
    return medians


def main() -> None:
    from scripts.bench.builds_typst import typst_builds
    from scripts.bench.cancel import cancel_latency, cancel_targets
    from scripts.bench_latex_raw import STARTER_DOCUMENT, twenty_page_document

    n = n_or(20)
    print(f"Build benchmark (pdflatex and Typst, bubblewrap; {n} builds x {BENCH_REPS} repetitions + warm-up)")
    with build_service() as (url, directory):
        user, client = author(url)
        raw_side = RawSide(directory / "raw", [LATEX, TYPST])
        overheads = []
        documents = (
            ("demo", "LaTeX demo", STARTER_DOCUMENT),
            ("20_pages", "20 LaTeX pages with a toc", twenty_page_document()),
        )
        for name, label, source in documents:
            paired = paired_builds(client, user, raw_side, project_type="latex", source=source, edit=latex_edit, n=n)
            overheads.append(report_paired("latex", name, label, paired, n))
        report(
            "reuse_hit_ms_p50",
            _reuse_ms(client, paired.project_id, n),
            unit="ms",
            n=n,
            config="unchanged resubmission answered as a succeeded job",
        )
        overheads += typst_builds(client, user, raw_side, n)
        cancels = cancel_latency(client, user, n)
        for line in overheads:
            target_line(line, OVERHEAD_TARGET_MS)
        cancel_targets(cancels)


if __name__ == "__main__":
    main()
