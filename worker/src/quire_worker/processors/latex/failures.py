"""Which failure class a finished LaTeX build belongs to (docs/architecture.md §13), or none."""

import re
import signal
from dataclasses import dataclass
from pathlib import PurePosixPath

from quire_worker.contracts import CompletedRun, Diagnostics, FailureClass, Limits, ProcessorFailure
from quire_worker.processors.latex.diagnostics import MAX_ENTRIES

MISSING_FILE = re.compile(r"File [`'](?P<name>[^`']+)' not found")
# Files a project normally takes from the TeX distribution rather than shipping itself.
DISTRIBUTION_EXTENSIONS = frozenset(
    {".sty", ".cls", ".clo", ".cfg", ".def", ".fd", ".ldf", ".bbx", ".cbx", ".lbx", ".dbx", ".bst"}
)
MISSING_FONT = (
    # fontspec, XeLaTeX and LuaLaTeX; TeX may wrap the line anywhere in it
    re.compile(r'The\s+font\s+"(?P<name>[^"]+)"\s+cannot\s+be\s+found'),
    # \font primitives: a quoted name (with spaces, options) or a bare one, up to "at <size>" or "not loadable"
    re.compile(r'Font \\[^=\s]+=(?P<name>"[^"]+"|[^\n]+?)(?: at \S+)? not loadable'),
)
FONT_NAME_PREFIX = re.compile(r"^(?:file|name):")
MISSING_BIBLIOGRAPHY_STYLE = re.compile(r"I couldn't open style file (?P<name>\S+)")
MISSING_PROGRAM = re.compile(r"^sh: \d+: (?P<name>\S+): not found$", re.MULTILINE)
# The shell latexmk runs each tool through names the signal that ended it.
CPU_EXHAUSTED = "CPU time limit exceeded"
FILE_TOO_BIG = "File size limit exceeded"
# TeX's own fixed-size tables, or the address-space limit as the engines report it.
MEMORY_EXHAUSTED = re.compile(r"TeX capacity exceeded|memory exhausted|not enough memory|out of memory", re.I)
# Signals that end latexmk from outside the build: the host's OOM killer, an operator, a shutdown. The
# processor's own kills (wall limit, cancellation) are flagged on the run and judged before these.
KILLED_FROM_OUTSIDE = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT})
# latexmk traps the catchable ones and exits with a status of its own, saying which it caught.
LATEXMK_CAUGHT = re.compile(r"^Caught a SIG(?P<name>[A-Z]+)", re.MULTILINE)
# A tool latexmk ran (the engine, BibTeX) ended by a signal, and latexmk went on: the shell it ran the tool
# through says so on stderr ("Killed"), or latexmk reports the tool's wait status divided by 256 as its "return
# code", the signal number showing as a fraction (SIGKILL: 0.03515625).
SHELL_SIGNAL_WORDS = {
    "Killed": signal.SIGKILL,
    "Terminated": signal.SIGTERM,
    "Hangup": signal.SIGHUP,
    "Interrupt": signal.SIGINT,
    "Quit": signal.SIGQUIT,
}
TOOL_SIGNALLED = re.compile(r"Command for '(?P<tool>[^']+)' gave return code (?P<code>\d+\.\d+)")
# The engine ended before writing its log, which TeX opens before reading the document: it did not fail on the
# document, something ended it (the shell that would have named the signal gone with it).
ENGINE_LEFT_NO_LOG = "LaTeX didn't generate the expected log file"


@dataclass(frozen=True)
class BuildEvidence:
    run: CompletedRun
    log: str  # engine log, bibliography log and tool messages, as far as they were read
    stderr: str
    diagnostics: Diagnostics  # bounded log and entries, attached to any failure
    pdf_produced: bool
    largest_file_bytes: int


def classify_build(evidence: BuildEvidence, limits: Limits) -> ProcessorFailure | None:
    """The failure this build ended in, or None when its PDF can be published."""
    for check in (_stopped, _resource_exhausted, _killed, _missing_dependency, _rejected):
        code_and_message = check(evidence, limits)
        if code_and_message is not None:
            failure_class, code, message = code_and_message
            return ProcessorFailure(failure_class, code, message, evidence.diagnostics)
    return None


def _stopped(evidence: BuildEvidence, limits: Limits) -> tuple[str, str, str] | None:
    run = evidence.run
    if run.cancelled:
        return FailureClass.WORKER_INTERRUPTED, "cancelled", "the build was cancelled"
    if run.timed_out:
        return FailureClass.RESOURCE_LIMIT, "wall_time_limit", f"the build ran past {limits.wall_seconds:g} s"
    if run.output_limit_exceeded:
        message = f"the build wrote more than {limits.output_bytes} bytes"
        return FailureClass.RESOURCE_LIMIT, "output_size_limit", message
    return None


def _resource_exhausted(evidence: BuildEvidence, limits: Limits) -> tuple[str, str, str] | None:
    if FILE_TOO_BIG in evidence.stderr or evidence.largest_file_bytes >= limits.file_size_bytes:
        message = f"the build wrote a file larger than {limits.file_size_bytes} bytes"
        return FailureClass.RESOURCE_LIMIT, "file_size_limit", message
    if CPU_EXHAUSTED in evidence.stderr:
        message = f"a build step used more than {limits.cpu_seconds} s of CPU time"
        return FailureClass.RESOURCE_LIMIT, "cpu_time_limit", message
    exhausted = MEMORY_EXHAUSTED.search(evidence.log) or MEMORY_EXHAUSTED.search(evidence.stderr)
    if exhausted and not evidence.pdf_produced:
        return FailureClass.RESOURCE_LIMIT, "memory_limit", "the build ran out of memory"
    return None


def _killed(evidence: BuildEvidence, limits: Limits) -> tuple[str, str, str] | None:
    """latexmk ended by a signal nobody in the build sent: not the document's fault, so worth another try."""
    returncode = evidence.run.returncode
    if returncode is not None and returncode < 0 and -returncode in KILLED_FROM_OUTSIDE:
        name = signal.Signals(-returncode).name
    elif (caught := LATEXMK_CAUGHT.search(evidence.stderr)) and f"SIG{caught['name']}" in _KILLED_NAMES:
        name = f"SIG{caught['name']}"
    elif tool_signal := _tool_signalled(evidence):
        name = tool_signal
    elif ENGINE_LEFT_NO_LOG in evidence.stderr and not MISSING_PROGRAM.search(evidence.stderr):
        message = "the compiler ended before it wrote its log (stopped from outside the build)"
        return FailureClass.TRANSIENT_INFRASTRUCTURE, "compiler_killed", message
    else:
        return None
    message = f"the compiler was stopped from outside the build ({name})"
    return FailureClass.TRANSIENT_INFRASTRUCTURE, "compiler_killed", message


_KILLED_NAMES = frozenset(killed.name for killed in KILLED_FROM_OUTSIDE)


def _tool_signalled(evidence: BuildEvidence) -> str | None:
    """The name of the outside signal that ended a tool latexmk ran, if one did."""
    for line in evidence.stderr.splitlines():
        if (word := SHELL_SIGNAL_WORDS.get(line.strip())) is not None:
            return word.name
    said = evidence.run.stdout.decode(errors="replace") + evidence.stderr
    for found in TOOL_SIGNALLED.finditer(said):
        number = round(float(found["code"]) * 256) & 0x7F
        if number in KILLED_FROM_OUTSIDE:
            return signal.Signals(number).name
    return None


def _missing_dependency(evidence: BuildEvidence, limits: Limits) -> tuple[str, str, str] | None:
    if evidence.run.returncode == 0 and evidence.pdf_produced:
        return None
    for found in MISSING_FILE.finditer(evidence.log):
        if PurePosixPath(found["name"]).suffix in DISTRIBUTION_EXTENSIONS:
            return _not_installed("missing_package", found["name"])
    for pattern in MISSING_FONT:
        if found := pattern.search(evidence.log):
            return _not_installed("missing_font", f"the font {_font_name(found['name'])}")
    if found := MISSING_BIBLIOGRAPHY_STYLE.search(evidence.log):
        return _not_installed("missing_package", found["name"])
    if found := MISSING_PROGRAM.search(evidence.stderr):
        return _not_installed("missing_program", found["name"])
    return None


def _font_name(spec: str) -> str:
    """The font a font specification names: ``"file:AwamiNastaliq-Regular.ttf:mode=harf;shaper=ot"`` names
    AwamiNastaliq-Regular.ttf, ``"[lmroman10-regular]:mapping=tex-text"`` lmroman10-regular."""
    name = FONT_NAME_PREFIX.sub("", " ".join(spec.strip().strip('"').split()))
    return name.split(":", 1)[0].strip("[]{} ") or spec


def _not_installed(code: str, what: str) -> tuple[str, str, str]:
    return FailureClass.UNSUPPORTED_DEPENDENCY, code, f"{what} is not installed on this worker"


def _rejected(evidence: BuildEvidence, limits: Limits) -> tuple[str, str, str] | None:
    if evidence.run.returncode == 0 and evidence.pdf_produced:
        return None
    errors = [entry for entry in evidence.diagnostics.entries if entry.severity == "error"]
    if errors:
        first_error = errors[0]
        place = ":".join(str(part) for part in (first_error.file, first_error.line) if part is not None)
        message = f"{place}: {first_error.message}" if place else first_error.message
        if len(errors) > 1:  # the diagnostics list them all, up to their bound
            at_least = "at least " if len(evidence.diagnostics.entries) >= MAX_ENTRIES else ""
            message += f" (and {at_least}{len(errors) - 1} more error{'s' * (len(errors) > 2)})"
        return FailureClass.PROCESSOR_REJECTED, "latex_error", message
    if not evidence.pdf_produced:
        return FailureClass.PROCESSOR_REJECTED, "no_pdf", "the build produced no PDF"
    message = f"latexmk failed (exit status {evidence.run.returncode})"
    if said := _latexmk_last_word(evidence.run):
        message += f": {said}"
    return FailureClass.PROCESSOR_REJECTED, "build_failed", message


def _latexmk_last_word(run) -> str:
    """latexmk's last line of its own about the run (``Latexmk: Errors, so I did not complete making targets``),
    for a failure nothing else explains."""
    for stream in (run.stderr, run.stdout):
        said = [line for line in stream.decode(errors="replace").splitlines() if line.startswith("Latexmk: ")]
        if said:
            return said[-1].removeprefix("Latexmk: ").strip()
    return ""
