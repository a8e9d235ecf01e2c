"""Sandboxed child of ``typst.compile.pdf/v1``: a ``project-bundle/v1`` → ``document.pdf`` + ``report.json``.

Run as ``python -m quire_worker.processors.typst.compile_pdf_child --input IN --output OUT
--settings JSON`` (see ``child_protocol``). Settings: ``max_pages``, ``max_pdf_bytes``,
``max_counted_pages``.

Reproducible: the compiler's ``timestamp`` is the manifest's source epoch, so the PDF's
creation and modification dates, its XMP dates and ``datetime.today()`` in the document are
the same on every build; fonts are Typst's embedded ones and the project's own files, never
the host's; and Typst derives the PDF's /ID from the document itself, not from paths or the
clock. The same bundle therefore gives the same PDF bytes in any work directory.

Words are counted in the compiled document, as a reader sees it: pypdf extracts the PDF's
text (Typst's PDFs map every glyph back to Unicode) and a word is a run of letters or digits,
joined across ``'`` and ``-`` (so "don't" and "well-known" count once). Typst offers no
plain-text output of its own (its HTML export is experimental and its query API sees only
locatable elements, never text); the PDF's text is exactly what was typeset, so text a script
computes counts too, and so do headers, footers and page numbers. A word hyphenated across a
line break counts twice.
"""

import io
import json
import os
import re
import unicodedata
import warnings
from dataclasses import dataclass
from pathlib import Path

import pypdf
import typst
from pypdf import PdfReader

from quire_worker.processors.child_protocol import (
    ChildArguments,
    ConversionFailure,
    child_main,
    diagnostic_entry,
)
from quire_worker.processors.typst.compilation import (
    NetworkIsolation,
    compile_failure,
    deny_network,
    refuse_registry_packages,
    registry_packages,
    warning_entries,
)
from quire_worker.processors.typst.project import TypstProject, read_project

PDF_NAME = "document.pdf"  # the orchestrator (typst_pdf) reads these two names
REPORT_NAME = "report.json"
# Typst's own guards against runaway documents: hitting one is a resource limit, not a mistake
# in the markup, just as a build stopped by the wall clock is.
EVALUATION_LIMITS = (
    "loop seems to be infinite",
    "maximum function call depth exceeded",
    "maximum show rule depth exceeded",
    "maximum layout depth exceeded",
    "maximum grouping depth exceeded",
)
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


@dataclass(frozen=True)
class BuildSettings:
    max_pages: int
    max_pdf_bytes: int
    max_counted_pages: int


def convert(arguments: ChildArguments) -> tuple[dict, ...]:
    settings = BuildSettings(**arguments.settings)
    project = read_project(arguments.input_dir)
    refuse_registry_packages(registry_packages(project.files_root, project.typst_paths))
    isolation = deny_network(arguments.scratch_dir)
    os.chdir(project.files_root)  # Typst shows diagnostic paths relative to the working directory
    pdf, found_warnings = compile_pdf(project, isolation)
    reader = _checked_size(pdf, settings)
    (arguments.output_dir / PDF_NAME).write_bytes(pdf)
    pages = len(reader.pages)
    summary = diagnostic_entry(f"built {pages} page{'s' * (pages != 1)}, {len(pdf)} bytes", severity="info")
    counting = write_word_report(reader, arguments.output_dir / REPORT_NAME, max_pages=settings.max_counted_pages)
    entries = warning_entries(found_warnings, project.files_root)
    return (*entries, isolation.entry, summary, *counting)


def compile_pdf(project: TypstProject, isolation: NetworkIsolation) -> tuple[bytes, list]:
    compiler = typst.Compiler(
        str(project.entry_file),
        root=str(project.files_root),  # Typst refuses every path outside it
        font_paths=[str(project.files_root)],
        ignore_system_fonts=True,  # the host's fonts would make the PDF depend on the worker
        package_path=str(isolation.packages),
        package_cache_path=str(isolation.cache),
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pdf, found = compiler.compile_with_warnings(format="pdf", timestamp=project.source_epoch)
    except typst.TypstError as exc:
        raise build_failure(exc, project) from exc
    return pdf, list(found)


def build_failure(error: typst.TypstError, project: TypstProject) -> ConversionFailure:
    """``compile_failure``'s classes, but a document that hit one of Typst's evaluation limits is a
    ``resource_limit``."""
    failure = compile_failure(error, project.files_root)
    first = next((entry for entry in failure.entries if entry["severity"] == "error"), None)
    if failure.failure_class != "processor_rejected" or first is None:
        return failure
    if not any(limit in first["message"] for limit in EVALUATION_LIMITS):
        return failure
    where = f"{first['file']}:{first['line']}: " if first["file"] else ""
    message = f"The Typst project exceeds a limit of the compiler: {where}{first['message']}"
    return ConversionFailure("resource_limit", "evaluation_limit", message, failure.entries)


def write_word_report(reader: PdfReader, path: Path, *, max_pages: int) -> tuple[dict, ...]:
    """Write ``{"words", "counted_by"}`` to ``path``; the report is optional, so a document too long
    to count (a bound that depends on the input alone, so the outputs stay reproducible) or text
    that cannot be extracted leaves a note instead."""
    if len(reader.pages) > max_pages:
        return (diagnostic_entry(f"words not counted: more than {max_pages} pages", severity="info"),)
    try:
        text = "\n".join(page.extract_text() or "" for page in reader.pages)
    except Exception as exc:  # pypdf signals trouble with many exception types; the count is optional
        return (diagnostic_entry(f"words not counted: {type(exc).__name__}", severity="warning"),)
    words = len(_WORD.findall(unicodedata.normalize("NFKC", text)))
    report = {"words": words, "counted_by": f"pypdf {pypdf.__version__}"}
    path.write_text(json.dumps(report, sort_keys=True), encoding="utf-8")  # the shape LaTeX builds write
    return ()


def _checked_size(pdf: bytes, settings: BuildSettings) -> PdfReader:
    """The compiled PDF, opened, once it is known to be within the size and page limits."""
    if len(pdf) > settings.max_pdf_bytes:
        message = f"The PDF would be {len(pdf)} bytes; at most {settings.max_pdf_bytes} may be delivered."
        raise ConversionFailure("resource_limit", "pdf_too_large", message)
    reader = PdfReader(io.BytesIO(pdf))
    if len(reader.pages) > settings.max_pages:
        message = f"The document has {len(reader.pages)} pages; at most {settings.max_pages} can be built."
        raise ConversionFailure("resource_limit", "too_many_pages", message)
    return reader


if __name__ == "__main__":
    raise SystemExit(child_main(convert))
