"""What a successful LaTeX build delivers: the PDF, SyncTeX data, the report (the word count and how the build
started: ``warm``, ``clean`` or ``fallback``), the warm start for the next build and the log.

Only the PDF is required. SyncTeX data or a word count that cannot be had costs the build
nothing: the role is left out and a note (an ``info`` entry) says why. The log is written last,
so that it lists those notes too.
"""

from dataclasses import dataclass
from pathlib import Path

from quire_worker.contracts import (
    Diagnostic,
    FailureClass,
    Limits,
    OutputFile,
    ProcessorFailure,
    ProcessorResult,
)
from quire_worker.processors.latex.log import BuildLog, with_entries
from quire_worker.processors.latex.synctex import SynctexUnusable, publish_synctex
from quire_worker.processors.latex.texcount import WordCountBeside, write_report
from quire_worker.processors.latex.warm_start import WarmFiles, WarmStartKey, warm_archive_write
from quire_worker.processors.latex.work_area import WorkArea, copy_source_file, source_file_bytes


@dataclass(frozen=True)
class FinishedBuild:
    work: WorkArea
    entry_path: str
    jobname: str
    build_log: BuildLog


@dataclass(frozen=True)
class WordCounting:
    texcount_version: str | None  # None: this worker cannot count words
    beside: WordCountBeside | None  # the count running beside the build, when this worker can count


@dataclass(frozen=True)
class WarmDelivery:
    start: str  # warm | clean | fallback
    files: WarmFiles | None  # what the next build may start from; None when over the bounds
    key: WarmStartKey
    notes: tuple[str, ...] = ()  # why the build did not start warm, when it had a warm start
    runs: tuple[str, ...] = ()  # the tools latexmk ran, in order


def deliver(
    build: FinishedBuild, output_dir: Path, limits: Limits, counting: WordCounting, warm: WarmDelivery
) -> ProcessorResult:
    outputs = [_pdf(build, output_dir, limits)]
    notes: list[Diagnostic] = [_note(text) for text in warm.notes]
    results = (
        _synctex(build, output_dir),
        _report(build, output_dir, limits, counting, warm),
        _warm(warm, output_dir),
    )
    for output_or_note in results:
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


def _warm(warm: WarmDelivery, output_dir: Path) -> list[OutputFile | Diagnostic]:
    if warm.files is None:
        return [_note("no warm start for the next build: the auxiliary files exceed its bounds")]
    path = output_dir / "warm-start.tar.gz"
    warm_archive_write(path, warm.files, warm.key)
    return [OutputFile(role="warm", path=path, media_type="application/gzip", filename=path.name)]


def _report(
    build: FinishedBuild, output_dir: Path, limits: Limits, counting: WordCounting, warm: WarmDelivery
) -> list[OutputFile | Diagnostic]:
    words, notes = _word_count(counting)
    path = output_dir / f"{build.jobname}.report.json"
    write_report(path, words, counting.texcount_version, start=warm.start, runs=warm.runs)
    return [OutputFile(role="report", path=path, media_type="application/json", filename=path.name), *notes]


def _word_count(counting: WordCounting) -> tuple[int | None, list[Diagnostic]]:
    if counting.beside is None:
        return None, [_note("words not counted: texcount is not installed on this worker")]
    count = counting.beside.result()
    return count.words, list(count.notes)


def _note(message: str) -> Diagnostic:
    return Diagnostic(file=None, line=None, severity="info", message=message)
