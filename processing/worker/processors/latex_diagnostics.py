"""Structured diagnostics from a TeX build: the engine's ``.log``, BibTeX/Biber's ``.blg``, stderr.

The build runs with ``-file-line-error`` and ``max_print_line=10000``, so most errors read
``./chapter.tex:12: message`` on one unwrapped line. Errors TeX reports the classic way
(``! message``) take their line from the ``l.<n>`` context line that follows.
"""

import re

from processing.worker.contracts import Diagnostic

MAX_ENTRIES = 200
# An error's "l.<n>" context line follows within a few lines; a file-not-found prompt takes ten.
CONTEXT_LOOKAHEAD_LINES = 12

FILE_LINE_ERROR = re.compile(r"^(?P<file>[^:\s][^:]*\.\w+):(?P<line>\d+): (?P<message>.+)$")
CLASSIC_ERROR = re.compile(r"^! (?P<message>.+)$")
ERROR_CONTEXT = re.compile(r"^l\.(?P<line>\d+) ?(?P<text>.*)$")
WARNING = re.compile(r"^(?:LaTeX|Package \S+|Class \S+|(?P<font>LaTeX Font)) Warning: (?P<message>.+)$")
INPUT_LINE = re.compile(r"on input line (?P<line>\d+)")
OVERFULL_BOX = re.compile(r"^(?P<message>Overfull \\[hv]box \([^)]*\)).*?at lines? (?P<line>\d+)")
# Consequences of an error already reported, not errors of their own.
AFTERMATH = ("Emergency stop.", "==> Fatal error occurred, no output PDF file produced!")

BIBER_MESSAGE = re.compile(r"\b(?P<level>ERROR|WARN) - (?P<message>.+)$")
BIBTEX_WARNING = re.compile(r"^Warning--(?P<message>.+)$")
BIBTEX_ERROR_PLACE = re.compile(r"^(?P<message>.*)---line (?P<line>\d+) of file (?P<file>\S+)$")
LATEXMK_FAILURE = "Latexmk: Failure in processing file"
ACCESS_REFUSED = re.compile(
    r"^\S+: Not (?P<action>reading from|writing to) (?P<path>.+) \((?P<rule>open\w+_any = p)\)\.$"
)


def tex_log_diagnostics(log: str) -> list[Diagnostic]:
    """Errors, warnings and overfull boxes in an engine ``.log``, in the order they occur."""
    lines = log.splitlines()
    entries = []
    for index, line in enumerate(lines):
        entry = _tex_error(line, lines[index + 1 : index + 1 + CONTEXT_LOOKAHEAD_LINES]) or _tex_notice(line)
        if entry is not None:
            entries.append(entry)
    return entries


def bibliography_log_diagnostics(blg: str) -> list[Diagnostic]:
    """Errors and warnings in a BibTeX or Biber ``.blg``."""
    entries = []
    previous = ""
    for line in blg.splitlines():
        if found := BIBER_MESSAGE.search(line):
            severity = "error" if found["level"] == "ERROR" else "warning"
            entries.append(Diagnostic(file=None, line=None, severity=severity, message=found["message"]))
        elif found := BIBTEX_WARNING.match(line):
            entries.append(Diagnostic(file=None, line=None, severity="warning", message=found["message"]))
        elif found := BIBTEX_ERROR_PLACE.match(line):
            message = (found["message"] or previous).strip()
            entries.append(Diagnostic(_project_file(found["file"]), int(found["line"]), "error", message))
        previous = line
    return entries


def tool_message_diagnostics(stderr: str) -> list[Diagnostic]:
    """What only stderr says: file accesses the engines refused, and why latexmk gave up."""
    entries = []
    lines = stderr.splitlines()
    for index, line in enumerate(lines):
        if found := ACCESS_REFUSED.match(line.strip()):
            message = f"refused {found['action']} {found['path']} ({found['rule']})"
            entries.append(Diagnostic(file=None, line=None, severity="error", message=message))
        elif line.startswith(LATEXMK_FAILURE) and index + 1 < len(lines):
            message = f"latexmk: {lines[index + 1].strip()}"
            entries.append(Diagnostic(file=None, line=None, severity="error", message=message))
    return entries


def merged(*groups: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    """The groups' entries in order, each once, at most MAX_ENTRIES."""
    unique = dict.fromkeys(entry for group in groups for entry in group)
    return tuple(unique)[:MAX_ENTRIES]


def _tex_error(line: str, following: list[str]) -> Diagnostic | None:
    if found := FILE_LINE_ERROR.match(line):
        file, line_number, message = _project_file(found["file"]), int(found["line"]), found["message"]
    elif found := CLASSIC_ERROR.match(line):
        file, line_number, message = None, None, found["message"]
    else:
        return None
    if message.strip() in AFTERMATH:
        return None
    place_file, place_line, context = _place_from(following)
    if context is not None:
        message = f"{message} [l.{place_line} {context}]"
    return Diagnostic(
        file=file or place_file, line=line_number or place_line, severity="error", message=message.strip()
    )


def _place_from(following: list[str]) -> tuple[str | None, int | None, str | None]:
    """File, line and source text an error's following lines point at (its "l.<n>" context)."""
    file = None
    for text in following:
        if found := FILE_LINE_ERROR.match(text):
            file = file or _project_file(found["file"])  # the "Emergency stop" that ends a prompt
        elif found := ERROR_CONTEXT.match(text):
            return file, int(found["line"]), found["text"].strip()
    return file, None, None


def _tex_notice(line: str) -> Diagnostic | None:
    if found := WARNING.match(line):
        place = INPUT_LINE.search(found["message"])
        severity = "info" if found["font"] else "warning"
        return Diagnostic(None, int(place["line"]) if place else None, severity, found["message"].strip())
    if found := OVERFULL_BOX.match(line):
        return Diagnostic(file=None, line=int(found["line"]), severity="info", message=found["message"])
    return None


def _project_file(path: str) -> str:
    return path.removeprefix("./")
