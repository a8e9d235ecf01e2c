"""The word count of a built LaTeX document: TeX Live's ``texcount``, run in a sandbox beside the build.

``texcount -merge`` follows the entry's ``\\input`` and ``\\include`` into the project's other
files; ``-sum=1,1,1`` counts the words of the text, of headings and of captions (texcount's
"total words", without formulas); ``-1`` prints that one number. It reads only the sources, so it
runs while the build runs (``WordCountBeside``), in a copy of them of its own (the sandbox hands a
work area to one uid at a time): on two cores it adds nothing to the build's time. A count that
fails costs the build nothing: no words in the report, and a note saying why.
texcount knows no ``\\if``: a file that inputs itself (guarded by a conditional, which the
build honoured) sends it into an endless recursion, so it gets a short time of its own.
"""

import dataclasses
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from quire_worker.contracts import CompletedRun, Diagnostic, Executor, ExecutorError, Limits
from quire_worker.processors.latex.work_area import WorkArea, work_area

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


class WordCountBeside:
    """``count_words`` in a thread of its own, in a fresh work area holding a copy of the sources."""

    def __init__(
        self,
        *,
        copy_sources: Callable[[Path], None],
        entry_path: str,
        executor: Executor,
        limits: Limits,
        cancel: threading.Event,
        next_to: Path,
    ):
        self._result: WordCount | None = None
        self._thread = threading.Thread(
            target=self._count,
            args=(copy_sources, entry_path, executor, limits, cancel, next_to),
            name="texcount",
            daemon=True,
        )
        self._thread.start()

    def _count(self, copy_sources, entry_path, executor, limits, cancel, next_to) -> None:
        try:
            with work_area(next_to=next_to) as area:
                copy_sources(area.sources)
                self._result = count_words(
                    entry_path=entry_path,
                    area=area,
                    executor=executor,
                    limits=limits,
                    seconds_left=limits.wall_seconds,
                    cancel=cancel,
                )
        except Exception as exc:
            self._result = _not_counted(f"texcount could not run: {exc}")

    def result(self) -> WordCount:
        """The count, once texcount is done (at most its own time limit away)."""
        self._thread.join()
        return self._result or _not_counted("texcount did not finish")


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


def write_report(
    destination: Path, words: int | None, texcount_version: str | None, *, start: str, runs: tuple[str, ...] = ()
) -> None:
    """The ``report`` role, ``{"words", "counted_by", "start", "runs"}`` (the words' shape is the Typst builds'
    too); without a count, ``words`` and ``counted_by`` are left out."""
    counted = {"words": words, "counted_by": f"texcount {texcount_version}"} if words is not None else {}
    report = json.dumps({**counted, "start": start, "runs": list(runs)}, sort_keys=True)
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
