"""The build log users see (bounded) and the text the failure classification reads."""

from dataclasses import dataclass

from processing.worker.contracts import CompletedRun, Diagnostics, Limits
from processing.worker.processors.latex_diagnostics import (
    bibliography_log_diagnostics,
    merged,
    tex_log_diagnostics,
    tool_message_diagnostics,
)
from processing.worker.processors.work_area import WorkArea, read_source_file
from processing.worker.truncation import bounded_text

# How much of each log is read for diagnostics; TeX logs can grow to the file size limit.
PARSE_BYTES = 8 * 1024 * 1024
SECTION_HEADING_BYTES = 128


@dataclass(frozen=True)
class BuildLog:
    parsed_text: str  # engine log and bibliography log, as read for the failure classification
    stderr: str
    diagnostics: Diagnostics  # the bounded log for users, with structured entries


def read_build_log(area: WorkArea, jobname: str, run: CompletedRun, limits: Limits) -> BuildLog:
    tex_log = _text(read_source_file(area, f"{jobname}.log", PARSE_BYTES))
    bibliography_log = _text(read_source_file(area, f"{jobname}.blg", PARSE_BYTES))
    stderr = _text(run.stderr)
    entries = merged(
        tex_log_diagnostics(tex_log),
        bibliography_log_diagnostics(bibliography_log),
        tool_message_diagnostics(stderr),
    )
    # An engine that was killed never flushed its .log; its terminal output says how far it got.
    transcript = tex_log or _text(run.stdout)
    log = _bounded_sections(
        limits.log_bytes,
        (transcript, ""),
        (bibliography_log, f"=== {jobname}.blg ==="),
        (stderr, "=== messages on stderr (latexmk, refused file accesses) ==="),
    )
    return BuildLog(
        parsed_text=tex_log + bibliography_log,
        stderr=stderr,
        diagnostics=Diagnostics(log=log, entries=entries),
    )


def _bounded_sections(limit: int, main: tuple[str, str], *extras: tuple[str, str]) -> str:
    """Join headed sections within ``limit`` bytes; each extra section may take a quarter of it."""
    budget = limit - SECTION_HEADING_BYTES * (1 + len(extras))
    parts = [(bounded_text(text, budget // 4), heading) for text, heading in extras if text.strip()]
    remaining = budget - sum(len(text.encode()) for text, _ in parts)
    parts.insert(0, (bounded_text(main[0], remaining), main[1]))
    return "\n".join(f"{heading}\n{text}" if heading else text for text, heading in parts)


def _text(data: bytes) -> str:
    return data.decode(errors="replace")
