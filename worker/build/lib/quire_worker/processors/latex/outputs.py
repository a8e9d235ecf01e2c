"""What a successful LaTeX build delivers: the PDF, SyncTeX data, the word count and the log.

Only the PDF is required. SyncTeX data or a word count that cannot be had costs the build
nothing: the role is left out and a note (an ``info`` entry) says why. The log is written last,
so that it lists those notes too.
"""

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from quire_worker.contracts import (
    Diagnostic,
    Executor,
    FailureClass,
    Limits,
    OutputFile,
    ProcessorFailure,
    ProcessorResult,
)
from quire_worker.processors.latex.log import BuildLog, with_entries
from quire_worker.processors.latex.synctex import SynctexUnusable, publish_synctex
from quire_worker.processors.latex.texcount import count_words, write_report
from quire_worker.processors.latex.work_area import WorkArea, copy_source_file, source_file_bytes


@dataclass(frozen=True)
class FinishedBuild:
    work: WorkArea
    entry_path: str
    jobname: str
    build_log: BuildLog
    started: float  # time.monotonic() when the job began: texcount gets what is left of its time


@dataclass(frozen=True)
class WordCounting:
    texcount_version: str | None  # None: this worker cannot count words
    executor: Executor
    cancel: threading.Event


def deliver(build: FinishedBuild, output_dir: Path, limits: Limits, counting: WordCounting) -> ProcessorResult:
    outputs = [_pdf(build, output_dir, limits)]
    notes: list[Diagnostic] = []
    for output_or_note in (_synctex(build, output_dir), _word_report(build, output_dir, limits, counting)):
        for item in output_or_note:
            (outputs if isinstance(item, OutputFile) else notes).append(item)
    diagnostics = with_entries(build.build_log.diagnostics, notes, limits)
    log_path = output_dir / f"{build.jobname}.log"
    log_path.write_text(diagnostics.log)
    outputs.insert(1, OutputFile(role="log", path=log_path, media_type="text/plain", filename=log_path.name))
    return ProcessorResult(outputs=tuple(outputs), diagnostics=diagnostics)


def _pdf(build: FinishedBuild, output_dir: Path, limits: Limits) -> OutputFile:
    name = f"{build.jobname}.pdf"
    if (source_file_bytes(build.work, name) or 0) > limits.output_bytes:
        message = f"the PDF is larger than {limits.output_bytes} bytes"
        raise ProcessorFailure(FailureClass.RESOURCE_LIMIT, "output_size_limit", message, build.build_log.diagnostics)
    copy_source_file(build.work, name, output_dir / name)
    return OutputFile(role="pdf", path=output_dir / name, media_type="application/pdf", filename=name)


def _synctex(build: FinishedBuild, output_dir: Path) -> list[OutputFile | Diagnostic]:
    path = output_dir / f"{build.jobname}.synctex.gz"
    try:
        publish_synctex(build.work, build.jobname, path)
    except SynctexUnusable as exc:
        return [_note(f"no SyncTeX data: {exc}")]
    return [OutputFile(role="synctex", path=path, media_type="application/gzip", filename=path.name)]


def _word_report(
    build: FinishedBuild, output_dir: Path, limits: Limits, counting: WordCounting
) -> list[OutputFile | Diagnostic]:
    if counting.texcount_version is None:
        return [_note("words not counted: texcount is not installed on this worker")]
    count = count_words(
        entry_path=build.entry_path,
        area=build.work,
        executor=counting.executor,
        limits=limits,
        seconds_left=limits.wall_seconds - (time.monotonic() - build.started),
        cancel=counting.cancel,
    )
    if count.words is None:
        return list(count.notes)
    path = output_dir / f"{build.jobname}.report.json"
    write_report(path, count.words, counting.texcount_version)
    return [OutputFile(role="report", path=path, media_type="application/json", filename=path.name), *count.notes]


def _note(message: str) -> Diagnostic:
    return Diagnostic(file=None, line=None, severity="info", message=message)
