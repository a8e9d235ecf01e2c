"""Structured diagnostics from a TeX build: the engine's ``.log``, BibTeX/Biber's ``.blg``, stderr.

The build runs with ``-file-line-error`` and ``max_print_line=10000``, so most errors read
``./chapter.tex:12: message`` on one unwrapped line. Errors TeX reports the classic way
(``! message``) take their line from the ``l.<n>`` context line that follows. Warnings and bad
boxes name only a line; their file is the one TeX was reading (``latex_log_files``).

Entries: errors (``error``); LaTeX, package, class and engine warnings (``warning``, font
substitutions ``info``); bad boxes (``warning``, the message starting ``Overfull \\hbox`` or
``Underfull \\vbox``, which is how Core groups them apart). A file is always project-relative;
a line is given only when it is a line of that file.
"""

import re
from collections.abc import Iterable

from quire_worker.contracts import Diagnostic
from quire_worker.processors.latex.log_files import OpenFiles

MAX_ENTRIES = 500  # what Core keeps of a job's entries
# An error's "l.<n>" context line follows within a few lines; a file-not-found prompt takes ten.
CONTEXT_LOOKAHEAD_LINES = 12
# A bad box's display (its contents, user text) ends with a blank line within a few lines.
BOX_DISPLAY_LINES = 8
WARNING_CONTINUATION_LINES = 12

FILE_LINE_ERROR = re.compile(r"^(?P<file>[^:\s][^:]*\.\w+):(?P<line>\d+): (?P<message>.+)$")
CLASSIC_ERROR = re.compile(r"^! (?P<message>.+)$")
ERROR_CONTEXT = re.compile(r"^l\.(?P<line>\d+) ?(?P<text>.*)$")
WARNING = re.compile(
    r"^(?:(?P<latex>LaTeX)|(?P<font>LaTeX Font)|(?P<kind>Package|Class|Module) (?P<name>\S+)) Warning: (?P<text>.*)$"
)
ENGINE_WARNING = re.compile(r"^(?:pdfTeX|XeTeX|LuaTeX|x?dvipdfmx):? ?warning\b", re.I)
LATEX_CONTINUATION = re.compile(r"^ {8,}(?P<text>\S.*)$")
INPUT_LINE = re.compile(r"on input line (?P<line>\d+)")
BAD_BOX = re.compile(r"^(?:Overfull|Underfull) \\[hv]box \([^)]*\)")
BOX_LINE = re.compile(r"at lines? (?P<line>\d+)")
# Consequences of an error already reported, not errors of their own.
AFTERMATH = ("Emergency stop.", "==> Fatal error occurred, no output PDF file produced!")
# Warnings only a rerun (or BibTeX/Biber) settles. latexmk stops at a pass that had errors, so
# in a failed build they speak of a pass that never had the chance, not of the document.
PROVISIONAL_WARNING = re.compile(
    r"^(?:Package \S+ Warning: )?(?:(?:Reference|Citation) [`'].*' on page .* undefined"
    r"|There were undefined (?:references|citations)|.*Rerun to get|Please \(?re\)?run)"
)
PROVISIONAL_NOTE = (
    "references and citations are checked once the document builds without errors: "
    "latexmk stops at a failing pass, before the reruns and BibTeX/Biber that resolve them"
)

BIBER_MESSAGE = re.compile(r"\b(?P<level>ERROR|WARN) - (?P<message>.+)$")
BIBTEX_WARNING = re.compile(r"^Warning--(?P<message>.+)$")
BIBTEX_ERROR_PLACE = re.compile(r"^(?P<message>.*)---line (?P<line>\d+) of file (?P<file>\S+)$")
# An error BibTeX found in a file of the build's own making (the .aux), so it has no place in the project.
BIBTEX_ERROR_READING = re.compile(r"^(?P<message>.+)---while reading file (?P<file>\S+)$")
# latexmk ends a failed run with what failed, one indented line per tool, on its standard output.
LATEXMK_SUMMARY = "Collected error summary (may duplicate other messages):"
TEX_ENGINES = {"latex", "pdflatex", "xelatex", "lualatex", "dvipdf", "xdvipdfmx"}
LATEXMK_FAILURE = "Latexmk: Failure in processing file"
ACCESS_REFUSED = re.compile(
    r"^\S+: Not (?P<action>reading from|writing to) (?P<path>.+) \((?P<rule>open\w+_any = p)\)\.$"
)


def tex_log_diagnostics(
    log: str, project_files: Iterable[str] = (), build_directories: Iterable[str] = ()
) -> list[Diagnostic]:
    """Errors, warnings and bad boxes in an engine ``.log``, in the order they occur.

    ``build_directories``: where the build ran, as TeX may print it, so that absolute names
    of project files become project-relative.
    """
    lines = log.splitlines()
    files = OpenFiles(frozenset(project_files), tuple(build_directories))
    entries = []
    index = 0
    while index < len(lines):
        for recognize in (_tex_error, _bad_box, _warning):
            if (found := recognize(lines, index, files)) is not None:
                entry, block_lines = found
                break
        else:
            files.follow(lines[index])
            entry, block_lines = None, 1
        if entry is not None:
            entries.append(entry)
        index += block_lines  # a block echoes user text: its parentheses are not TeX's files
    return entries


def without_provisional_references(entries: list[Diagnostic]) -> list[Diagnostic]:
    """A failed build's entries without the warnings its missing reruns would have settled."""
    if not any(entry.severity == "error" for entry in entries):
        return entries
    kept = [entry for entry in entries if entry.severity == "error" or not PROVISIONAL_WARNING.match(entry.message)]
    if len(kept) == len(entries):
        return entries
    return [*kept, Diagnostic(file=None, line=None, severity="info", message=PROVISIONAL_NOTE)]


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
            entries.append(Diagnostic(found["file"].removeprefix("./"), int(found["line"]), "error", message))
        elif found := BIBTEX_ERROR_READING.match(line):
            message = f"BibTeX: {found['message'].strip()} (while reading {found['file'].removeprefix('./')})"
            entries.append(Diagnostic(file=None, line=None, severity="error", message=message))
        previous = line
    return entries


def latexmk_summary_diagnostics(stdout: str) -> list[Diagnostic]:
    """Which tool beside the TeX engine latexmk says failed and why (``bibtex main: Bibtex errors: See file
    'main.blg'``): a run that failed without a TeX error is explained by these. The engine's own lines are left
    out: its log, or the missing PDF, says more."""
    lines = stdout.splitlines()
    if LATEXMK_SUMMARY not in lines:
        return []
    entries = []
    for line in lines[lines.index(LATEXMK_SUMMARY) + 1 :]:
        if not line.startswith(" ") or not line.strip():
            break
        if line.strip().split(":", 1)[0].split()[0] not in TEX_ENGINES:
            entries.append(Diagnostic(file=None, line=None, severity="error", message=f"latexmk: {line.strip()}"))
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


def merged(*groups: Iterable[Diagnostic]) -> tuple[Diagnostic, ...]:
    """The groups' entries, each once, in order; past MAX_ENTRIES errors are kept before warnings,
    warnings before bad boxes, and bad boxes before notes."""
    unique = list(dict.fromkeys(entry for group in groups for entry in group))
    if len(unique) <= MAX_ENTRIES:
        return tuple(unique)
    kept = sorted(range(len(unique)), key=lambda index: (importance(unique[index]), index))[:MAX_ENTRIES]
    return tuple(unique[index] for index in sorted(kept))


def importance(entry: Diagnostic) -> int:
    """0 for errors, 1 for warnings, 2 for bad boxes, 3 for notes."""
    if entry.severity == "error":
        return 0
    if entry.severity == "warning":
        return 2 if BAD_BOX.match(entry.message) else 1
    return 3


def _tex_error(lines: list[str], index: int, files: OpenFiles) -> tuple[Diagnostic | None, int] | None:
    if found := FILE_LINE_ERROR.match(lines[index]):
        read = files.reading(found["file"])  # the file TeX names is the one it is reading
        file, line_number, message, in_project = read.name, int(found["line"]), found["message"], read.in_project
    elif found := CLASSIC_ERROR.match(lines[index]):
        file, line_number, message, in_project = None, None, found["message"], True
    else:
        return None
    following = lines[index + 1 : index + 1 + CONTEXT_LOOKAHEAD_LINES]
    place_file, place_line, context, context_lines = _place_from(following, files)
    if message.strip() in AFTERMATH:
        return None, 1 + context_lines
    if context is not None:
        message = f"{message} [l.{place_line} {context}]"
    if file is None:  # a classic error: the "Emergency stop" after it, or the file TeX was reading
        place = files.place()
        file, line_number = place_file or place.file, place_line if place_file or place.reading_it else None
    elif not in_project:  # read while loading a package or a generated file: name the project file around it
        message, file, line_number = f"{message} [in {file}:{line_number}]", files.place().file, None
    return Diagnostic(file=file, line=line_number, severity="error", message=message), 1 + context_lines


def _place_from(following: list[str], files: OpenFiles) -> tuple[str | None, int | None, str | None, int]:
    """File, line and source text an error's following lines point at (its "l.<n>" context), and how
    many lines the context takes: up to the "l.<n>" line and the rest of the source line after it."""
    file = None
    for offset, text in enumerate(following):
        if found := FILE_LINE_ERROR.match(text):
            file = file or files.log_file(found["file"]).name  # the "Emergency stop" that ends a prompt
        elif found := ERROR_CONTEXT.match(text):
            return file, int(found["line"]), found["text"].strip(), min(offset + 2, len(following))
    return file, None, None, 0


def _bad_box(lines: list[str], index: int, files: OpenFiles) -> tuple[Diagnostic, int] | None:
    if not BAD_BOX.match(lines[index]):
        return None
    place = files.place()
    found = BOX_LINE.search(lines[index])
    line_number = int(found["line"]) if found and place.reading_it else None
    entry = Diagnostic(file=place.file, line=line_number, severity="warning", message=lines[index].strip())
    return entry, _box_display_lines(lines, index)


def _box_display_lines(lines: list[str], index: int) -> int:
    """The header and the box's display up to the blank line that ends it."""
    for offset in range(1, BOX_DISPLAY_LINES + 1):
        if index + offset >= len(lines) or not lines[index + offset].strip():
            return offset
    return 1  # no display ended where one should: scan what follows as usual


def _warning(lines: list[str], index: int, files: OpenFiles) -> tuple[Diagnostic, int] | None:
    if found := WARNING.match(lines[index]):
        continuation = _continuation_pattern(found)
        texts, block_lines = [found["text"].strip()], 1
        while block_lines <= WARNING_CONTINUATION_LINES and index + block_lines < len(lines):
            if not (more := continuation.match(lines[index + block_lines])):
                break
            texts.append(more["text"].strip())
            block_lines += 1
        text = " ".join(texts)
        message = text if found["latex"] or found["font"] else f"{found['kind']} {found['name']} Warning: {text}"
        severity = "info" if found["font"] else "warning"
    elif ENGINE_WARNING.match(lines[index]):
        message, severity, block_lines = lines[index].strip(), "warning", 1
    else:
        return None
    place = files.place()
    line = INPUT_LINE.search(message)
    line_number = int(line["line"]) if line and place.reading_it else None
    return Diagnostic(file=place.file, line=line_number, severity=severity, message=message), block_lines


def _continuation_pattern(found: re.Match) -> re.Pattern:
    """How the lines continuing a warning start: LaTeX indents them, packages repeat their name."""
    if found["latex"]:
        return LATEX_CONTINUATION
    name = "Font" if found["font"] else found["name"]
    return re.compile(rf"^\({re.escape(name)}\)\s+(?P<text>\S.*)$")
