"""``typst.compile.pdf/v1``: build a Typst project bundle into a PDF with the ``typst`` package.

This orchestrator runs in the worker; the compilation runs in ``typst_pdf_child`` inside the
sandbox, exactly as the PPTX export's does (same executor, rlimits, wall limit, no network,
the project read-only and only the output directory writable), and what it wrote is checked
again here. Failures are classified as LaTeX builds' are: a registry package →
``unsupported_dependency`` naming it, a compile error → ``processor_rejected`` with file:line,
runaway loops, recursion, page counts and sizes → ``resource_limit``. How the PDF is made
reproducible and how words are counted: see the child.

Outputs: ``pdf`` (named after the entry file), ``log`` (the compiler's diagnostics as text) and,
when the words could be counted, ``report`` (``{"words", "counted_by"}``).
"""

import json
import threading
from pathlib import Path, PurePosixPath

from quire_worker.contracts import (
    Diagnostics,
    Executor,
    FailureClass,
    Limits,
    OutputFile,
    ProcessorFailure,
    ProcessorResult,
)
from quire_worker.processors.child_runner import run_child
from quire_worker.processors.runtime_versions import MISSING, installed_version
from quire_worker.truncation import bounded_text

OPERATION = "typst.compile.pdf/v1"
PROCESSOR_VERSION = "quire-typst-pdf/1"
CHILD_MODULE = "quire_worker.processors.typst.compile_pdf_child"
# What the child writes (its PDF_NAME and REPORT_NAME: not imported, so that the worker can load
# this module and say what is missing on a host without typst) and the log this side adds.
PDF_NAME, REPORT_NAME, LOG_NAME = "document.pdf", "report.json", "build.log"
MAX_PAGES = 10_000
# Counting reads every page's text again; past this many pages the build goes without a count.
MAX_COUNTED_PAGES = 2_000
MAX_REPORT_BYTES = 64 * 1024
MAX_MANIFEST_BYTES = 8 * 1024 * 1024
_LIBRARIES = ("typst", "pypdf")


class TypstPdfProcessor:
    operation = OPERATION

    def __init__(self, *, max_pages: int = MAX_PAGES, max_counted_pages: int = MAX_COUNTED_PAGES):
        self.settings = {"max_pages": max_pages, "max_counted_pages": max_counted_pages}
        self.runtime_version = " ".join(f"{name}/{installed_version(name)}" for name in _LIBRARIES)
        self.contract = f"{PROCESSOR_VERSION} {self.runtime_version} pages-{max_pages} words-{max_counted_pages}"

    def unavailable_reason(self) -> str | None:
        missing = [name for name in _LIBRARIES if installed_version(name) == MISSING]
        return f"Typst builds need the Python packages {', '.join(missing)}." if missing else None

    def run(
        self,
        *,
        input_dir: Path,
        output_dir: Path,
        request: dict,
        limits: Limits,
        cancel: threading.Event,
        executor: Executor,
    ) -> ProcessorResult:
        """Build the bundle's entry file into ``output_dir``; ProcessorFailure classifies every failure.

        ``request`` adds nothing: the operation has no options and the manifest fixes the rest.
        """
        reason = self.unavailable_reason()
        if reason:
            raise ProcessorFailure(FailureClass.UNSUPPORTED_DEPENDENCY, "dependency_missing", reason)
        settings = {**self.settings, "max_pdf_bytes": limits.output_bytes}
        try:
            outcome = run_child(
                module=CHILD_MODULE,
                input_dir=input_dir,
                output_dir=output_dir,
                settings=settings,
                limits=limits,
                cancel=cancel,
                executor=executor,
            )
        except ProcessorFailure as failure:
            failure.diagnostics = self.with_build_log(failure.diagnostics, limits)
            raise
        diagnostics = self.with_build_log(outcome.diagnostics, limits)
        return _published(output_dir, _pdf_stem(input_dir), diagnostics, limits)

    def with_build_log(self, diagnostics: Diagnostics, limits: Limits) -> Diagnostics:
        """The diagnostics with a log a person can read: a line naming the compiler, the entries as
        ``file:line: severity: message``, then whatever the child printed. Typst keeps no log itself."""
        lines = [f"Typst build: {self.contract}", *(_log_line(entry) for entry in diagnostics.entries)]
        if diagnostics.log.strip():
            lines += ["", diagnostics.log.rstrip()]
        log = bounded_text("\n".join(lines) + "\n", limits.log_bytes)
        return Diagnostics(log=log, entries=diagnostics.entries)


def _published(output_dir: Path, stem: str, diagnostics: Diagnostics, limits: Limits) -> ProcessorResult:
    pdf_path, report_path, log_path = output_dir / PDF_NAME, output_dir / REPORT_NAME, output_dir / LOG_NAME
    _validate_pdf(pdf_path, limits, diagnostics)
    log_path.write_text(diagnostics.log, encoding="utf-8")
    outputs = [
        OutputFile("pdf", pdf_path, "application/pdf", f"{stem}.pdf"),
        OutputFile("log", log_path, "text/plain", f"{stem}.log"),
    ]
    if _report_present(report_path):
        outputs.append(OutputFile("report", report_path, "application/json", f"{stem}.report.json"))
    return ProcessorResult(outputs=tuple(outputs), diagnostics=diagnostics)


def _log_line(entry) -> str:
    where = ":".join(str(part) for part in (entry.file, entry.line) if part is not None)
    return f"{where}: {entry.severity}: {entry.message}" if where else f"{entry.severity}: {entry.message}"


def _validate_pdf(path: Path, limits: Limits, diagnostics: Diagnostics) -> None:
    if path.is_symlink() or not path.is_file():
        raise _contract_violation("pdf_missing", "The build left no PDF.")
    if path.stat().st_size > limits.output_bytes:
        message = f"the PDF is larger than {limits.output_bytes} bytes"
        raise ProcessorFailure(FailureClass.RESOURCE_LIMIT, "output_size_limit", message, diagnostics)
    with path.open("rb") as stream:
        if stream.read(5) != b"%PDF-":
            raise _contract_violation("pdf_invalid", "The build's output is not a PDF.")


def _report_present(path: Path) -> bool:
    """Whether the child left a well-formed word report; it may leave none (the role is optional)."""
    if not path.exists() and not path.is_symlink():
        return False
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_REPORT_BYTES:
        raise _contract_violation("report_invalid", "The build's report is not a file within the size limit.")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _contract_violation("report_invalid", "The build's report is not JSON.") from exc
    words = report.get("words") if isinstance(report, dict) else None
    if not isinstance(words, int) or isinstance(words, bool) or not isinstance(report.get("counted_by"), str):
        raise _contract_violation("report_invalid", "The build's report lacks its word count.")
    return True


def _pdf_stem(input_dir: Path) -> str:
    """The entry file's stem, for the outputs' names: ``chapters/thesis.typ`` → ``thesis``.

    The child has already refused a bundle without a usable manifest, so this only reads a name,
    and keeps it to characters safe in any download's file name."""
    manifest_path = input_dir / "manifest.json"
    try:
        if manifest_path.is_symlink() or manifest_path.stat().st_size > MAX_MANIFEST_BYTES:
            return "document"
        entry_path = json.loads(manifest_path.read_text(encoding="utf-8")).get("entry_path")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return "document"
    stem = PurePosixPath(str(entry_path or "")).stem
    safe = "".join(char if char.isalnum() or char in "-_." else "_" for char in stem).strip(".")
    return safe[:100] or "document"


def _contract_violation(code: str, message: str) -> ProcessorFailure:
    return ProcessorFailure(FailureClass.INTERNAL_CONTRACT_VIOLATION, code, message)
