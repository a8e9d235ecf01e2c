"""The word count of a built LaTeX document: TeX Live's ``texcount``, run in the build's sandbox.

``texcount -merge`` follows the entry's ``\\input`` and ``\\include`` into the project's other
files; ``-sum=1,1,1`` counts the words of the text, of headings and of captions (texcount's
"total words", without formulas); ``-1`` prints that one number. It runs after the build, in
the same sandbox arrangement (the work area, owned by the job's sandbox uid for the run, so that
whatever modes the build left its files with, texcount can read them), once the outputs are
copied out. A count that fails costs the build nothing: no report, and a note saying why.
texcount knows no ``\\if``: a file that inputs itself (guarded by a conditional, which the
build honoured) sends it into an endless recursion, so it gets a short time of its own.
"""

import dataclasses
import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from quire_worker.contracts import CompletedRun, Diagnostic, Executor, ExecutorError, Limits
from quire_worker.processors.latex.work_area import WorkArea

TEXCOUNT_OPTIONS = ("-merge", "-sum=1,1,1", "-1", "-nocol")
TEXCOUNT_SECONDS = 20
TEXCOUNT_MEMORY_BYTES = 1024**3
TEXCOUNT_CAPTURED_BYTES = 1024 * 1024
MIN_SECONDS_LEFT = 1.0
# "12" on success; texcount still exits 0 after trouble, adding " (errors:N)" to its number.
COUNT_OUTPUT = re.compile(r"\s*(?P<words>\d+)\s*(?:\(errors:(?P<errors>\d+)\)\s*)?")


@dataclass(frozen=True)
class WordCount:
    words: int | None  # None: not counted
    notes: tuple[Diagnostic, ...] = ()


def count_words(
    *,
    entry_path: str,
    area: WorkArea,
    executor: Executor,
    limits: Limits,
    seconds_left: float,
    cancel: threading.Event,
) -> WordCount:
    """The words of ``entry_path`` and the files it inputs, counted in the area's build directory."""
    if cancel.is_set():
        return _not_counted("the job was cancelled")
    if seconds_left < MIN_SECONDS_LEFT:
        return _not_counted("the build used up the job's time")
    try:
        run = executor.run(
            ["texcount", *TEXCOUNT_OPTIONS, entry_path],
            cwd=area.sources,
            writable=[area.root],
            readable=[],
            env=texcount_environment(area),
            limits=texcount_limits(limits, seconds_left),
            cancel=cancel,
        )
    except ExecutorError as exc:
        return _not_counted(f"texcount could not run: {exc}")
    return _counted(run)


def texcount_limits(limits: Limits, seconds_left: float) -> Limits:
    seconds = min(TEXCOUNT_SECONDS, seconds_left)
    return dataclasses.replace(
        limits,
        wall_seconds=seconds,
        cpu_seconds=max(1, min(limits.cpu_seconds, int(seconds))),
        memory_bytes=min(limits.memory_bytes, TEXCOUNT_MEMORY_BYTES),
        # output_bytes stays: executors measure it over the whole work area, which the build filled.
        log_bytes=min(limits.log_bytes, TEXCOUNT_CAPTURED_BYTES),
    )


def texcount_environment(area: WorkArea) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(area.home), "LC_ALL": "C.UTF-8", "TZ": "UTC"}


def write_report(destination: Path, words: int, texcount_version: str) -> None:
    """The ``report`` role, ``{"words", "counted_by"}``, the shape Typst builds report too."""
    report = json.dumps({"words": words, "counted_by": f"texcount {texcount_version}"}, sort_keys=True)
    destination.write_text(report + "\n", encoding="utf-8")


def _counted(run: CompletedRun) -> WordCount:
    if run.timed_out or run.cancelled or run.output_limit_exceeded:
        return _not_counted("texcount ran out of time or output (a file that inputs itself?)")
    found = COUNT_OUTPUT.fullmatch(run.stdout.decode(errors="replace"))
    if run.returncode != 0 or found is None:
        stderr = run.stderr.decode(errors="replace").strip().splitlines()
        return _not_counted(f"texcount failed (exit status {run.returncode}): {stderr[-1] if stderr else ''}")
    if found["errors"]:
        problems = [line for line in run.stderr.decode(errors="replace").splitlines() if line.startswith("ERROR")]
        detail = f" ({problems[0].removeprefix('ERROR:').strip()})" if problems else ""
        note = f"texcount met {found['errors']} problem(s) while counting{detail}; the count may be incomplete"
        return WordCount(int(found["words"]), (_note(note),))
    return WordCount(int(found["words"]))


def _not_counted(reason: str) -> WordCount:
    return WordCount(None, (_note(f"words not counted: {reason.strip()}"),))


def _note(message: str) -> Diagnostic:
    return Diagnostic(file=None, line=None, severity="info", message=message)
