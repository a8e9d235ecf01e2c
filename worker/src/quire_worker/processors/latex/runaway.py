"""Where a runaway argument began. When a file ends inside a macro's argument (a forgotten ``}``), TeX reports
``! File ended while scanning use of \\textbf.`` with no file or line: it has read past the end of every file.
The log shows the argument's first tokens (``Runaway argument?`` and the line after it); the project's sources
show where they were written, which is the line the author must fix.
"""

import dataclasses
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from quire_worker.contracts import Diagnostic

RUNAWAY = re.compile(
    r"^Runaway (?:argument|text|definition|preamble)\?\n(?P<tokens>[^\n]*)\n"
    r"(?:! |\S+:\d+: )File ended while scanning (?:use|definition|text) of (?P<macro>\\[^\s.]+|[^\s.]+) ?\.",
    re.MULTILINE,
)
WORD = re.compile(r"[^\s\\{}]+")
SEARCHED_WORDS = 4
SOURCE_SUFFIXES = frozenset({".tex", ".ltx", ".sty", ".cls", ".bib"})


@dataclasses.dataclass(frozen=True)
class Runaway:
    macro: str
    words: tuple[str, ...]  # the argument's first words, as TeX showed them


def runaways_of(tex_log: str) -> list[Runaway]:
    found = []
    for match in RUNAWAY.finditer(tex_log):
        tokens = match["tokens"].split("\\par", 1)[0]
        found.append(Runaway(match["macro"], tuple(WORD.findall(tokens)[:SEARCHED_WORDS])))
    return found


def runaways_located(
    entries: Sequence[Diagnostic], tex_log: str, sources: Path, project_files: Iterable[str]
) -> list[Diagnostic]:
    """``entries`` with each "File ended while scanning use of" error placed where its argument began, when the
    sources show it once (TeX places it nowhere, or at the end of the file that ended)."""
    runaways = {runaway.macro: runaway for runaway in runaways_of(tex_log)}
    files = [path for path in project_files if Path(path).suffix in SOURCE_SUFFIXES]
    located = []
    for entry in entries:
        runaway = _runaway_of(entry, runaways)
        place = _where_written(runaway, sources, files) if runaway else None
        if place is not None:
            file, line = place
            entry = dataclasses.replace(
                entry, file=file, line=line, message=f"{entry.message} (its argument begins here)"
            )
        located.append(entry)
    return located


def _runaway_of(entry: Diagnostic, runaways: dict[str, Runaway]) -> Runaway | None:
    if entry.severity != "error" or not entry.message.startswith("File ended while scanning"):
        return None
    return next((runaway for macro, runaway in runaways.items() if macro in entry.message), None)


def _where_written(runaway: Runaway, sources: Path, files: list[str]) -> tuple[str, int] | None:
    optional = r"(?:\s*\[[^\]]*\])?"  # an optional argument before the runaway one
    words = r"\s+".join(re.escape(word) for word in runaway.words)
    pattern = re.compile(re.escape(runaway.macro) + r"\*?" + optional + r"\s*\{\s*" + words)
    places = []
    for path in files:
        try:
            text = (sources / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        places += [(path, text.count("\n", 0, match.start()) + 1) for match in pattern.finditer(text)]
    return places[0] if len(places) == 1 else None
