"""The build log users see (bounded) and the text the failure classification reads."""

import os
from collections.abc import Iterable
from dataclasses import dataclass

from quire_worker.contracts import CompletedRun, Diagnostic, Diagnostics, Limits
from quire_worker.processors.latex.diagnostics import (
    bibliography_log_diagnostics,
    importance,
    latexmk_summary_diagnostics,
    merged,
    tex_log_diagnostics,
    tool_message_diagnostics,
    without_provisional_references,
)
from quire_worker.processors.latex.runaway import runaways_located
from quire_worker.processors.latex.work_area import WorkArea, read_source_file
from quire_worker.truncation import bounded_text

# How much of each log is read for diagnostics; TeX logs can grow to the file size limit.
PARSE_BYTES = 8 * 1024 * 1024
SECTION_HEADING_BYTES = 128
SUMMARY_HEADING = "=== errors, warnings and bad boxes by file and line ==="


@dataclass(frozen=True)
class BuildLog:
    parsed_text: str  # engine log and bibliography log, as read for the failure classification
    stderr: str
    diagnostics: Diagnostics  # the bounded log for users, with structured entries


def read_build_log(
    area: WorkArea, jobname: str, run: CompletedRun, limits: Limits, project_files: Iterable[str] = ()
) -> BuildLog:
    tex_log = _text(read_source_file(area, f"{jobname}.log", PARSE_BYTES))
    bibliography_log = _text(read_source_file(area, f"{jobname}.blg", PARSE_BYTES))
    stderr = _text(run.stderr)
    build_directories = (str(area.sources), os.path.realpath(area.sources))
    project_files = tuple(project_files)
    tex_entries = tex_log_diagnostics(tex_log, project_files, build_directories)
    entries = merged(
        without_provisional_references(runaways_located(tex_entries, tex_log, area.sources, project_files)),
        bibliography_log_diagnostics(bibliography_log),
        tool_message_diagnostics(stderr),
        # Which tool latexmk says failed, for a run without a TeX error (with one, it only repeats it).
        ()
        if any(entry.severity == "error" for entry in tex_entries)
        else latexmk_summary_diagnostics(_text(run.stdout)),
    )
    # An engine that was killed never flushed its .log; its terminal output says how far it got.
    transcript = tex_log or _text(run.stdout)
    log = _bounded_sections(
        limits.log_bytes,
        (transcript, ""),
        (bibliography_log, f"=== {jobname}.blg ==="),
        (stderr, "=== messages on stderr (latexmk, refused file accesses) ==="),
        (entries_summary(entries), SUMMARY_HEADING),
    )
    return BuildLog(
        parsed_text=tex_log + bibliography_log,
        stderr=stderr,
        diagnostics=Diagnostics(log=log, entries=entries),
    )


def with_entries(diagnostics: Diagnostics, added: Iterable[Diagnostic], limits: Limits) -> Diagnostics:
    """``diagnostics`` with more entries, which the log's summary lists too."""
    added = tuple(added)
    if not added:
        return diagnostics
    heading = "" if SUMMARY_HEADING in diagnostics.log else f"{SUMMARY_HEADING}\n"
    log = bounded_text(f"{diagnostics.log.rstrip()}\n{heading}{entries_summary(added)}\n", limits.log_bytes)
    return Diagnostics(log=log, entries=merged(diagnostics.entries, added))


def entries_summary(entries: Iterable[Diagnostic]) -> str:
    """One ``file:line: severity: message`` line per entry, errors first: the log holds every error in a
    form an editor can jump to, even when the transcript itself was cut."""
    ranked = sorted(entries, key=importance)
    return "\n".join(_summary_line(entry) for entry in ranked)


def _summary_line(entry: Diagnostic) -> str:
    where = ":".join(str(part) for part in (entry.file, entry.line) if part is not None)
    return f"{where}: {entry.severity}: {entry.message}" if where else f"{entry.severity}: {entry.message}"


def _bounded_sections(limit: int, main: tuple[str, str], *extras: tuple[str, str]) -> str:
    """Join headed sections within ``limit`` bytes; each extra section may take a quarter of it."""
    budget = limit - SECTION_HEADING_BYTES * (1 + len(extras))
    parts = [(bounded_text(text, budget // 4), heading) for text, heading in extras if text.strip()]
    remaining = budget - sum(len(text.encode()) for text, _ in parts)
    parts.insert(0, (bounded_text(main[0], remaining), main[1]))
    return "\n".join(f"{heading}\n{text}" if heading else text for text, heading in parts)


def _text(data: bytes) -> str:
    return data.decode(errors="replace")
