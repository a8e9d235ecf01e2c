"""A build's diagnostics as an author reads them: errors, warnings and bad boxes, each with file and line.

Entries come from the processor (``severity`` error, warning or info). Overfull and underfull boxes are
TeX's warnings about layout, not about the text, so they get a group of their own, whatever severity the
processor gave them; notes (``info``) are kept for the raw log only.
"""

import re
from dataclasses import dataclass

BAD_BOX = re.compile(r"^(Overfull|Underfull) \\[hv]box")


@dataclass(frozen=True)
class Entry:
    file: str | None
    line: int | None
    message: str

    @property
    def place(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or (f"line {self.line}" if self.line else "")


@dataclass(frozen=True)
class DiagnosticGroups:
    errors: tuple[Entry, ...] = ()
    warnings: tuple[Entry, ...] = ()
    bad_boxes: tuple[Entry, ...] = ()

    @property
    def any(self) -> bool:
        return bool(self.errors or self.warnings or self.bad_boxes)


@dataclass(frozen=True)
class DiagnosticCounts:
    errors: int = 0
    warnings: int = 0
    bad_boxes: int = 0


def diagnostic_groups(entries: list[dict]) -> DiagnosticGroups:
    groups: dict[str, list[Entry]] = {"errors": [], "warnings": [], "bad_boxes": []}
    for raw in entries or []:
        if not isinstance(raw, dict):
            continue
        group = _group_of(raw)
        if group is not None:
            line = raw.get("line")
            entry = Entry(raw.get("file") or None, line if isinstance(line, int) else None, str(raw.get("message", "")))
            groups[group].append(entry)
    return DiagnosticGroups(**{name: tuple(items) for name, items in groups.items()})


def diagnostic_counts(entries: list[dict]) -> DiagnosticCounts:
    groups = diagnostic_groups(entries)
    return DiagnosticCounts(len(groups.errors), len(groups.warnings), len(groups.bad_boxes))


def _group_of(raw: dict) -> str | None:
    message, severity = str(raw.get("message", "")), raw.get("severity")
    if BAD_BOX.match(message):
        return "bad_boxes"
    if severity == "error":
        return "errors"
    if severity == "warning":
        return "warnings"
    return None
