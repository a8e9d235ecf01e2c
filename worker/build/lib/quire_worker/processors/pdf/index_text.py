"""``pdf.index.text/v1``: a library version's PDF → its text per page (``pages.json``).

**Extractor: pypdf.** It is pure Python and already one of Quire's dependencies
(Core's finalizer checks PDFs with it), so the worker needs nothing new; it
extracts text page by page, which is exactly the unit we index, and it reads
damaged files leniently (``strict=False``). pdfminer.six lays text out more
faithfully (columns, reading order) but is several times slower, and layout
does not matter to a full-text index of words per page.

Parsing a hostile PDF is the risky part, so it runs in ``pdf_text_child``
through the executor (a sandbox with rlimits and a wall-clock kill), like the
other processors; the child also keeps its own time budget so a slow document
fails with a classified ``resource_limit`` before the hard kill. Bounds: pages,
characters per page and in all. Corrupt or password-protected PDFs fail as
``invalid_input`` (``pdf_corrupt``, ``pdf_encrypted``).
"""

import json
import threading
from pathlib import Path

from quire_wire import PDF_PAGES_SCHEMA
from quire_worker.contracts import (
    Executor,
    FailureClass,
    Limits,
    OutputFile,
    ProcessorFailure,
    ProcessorResult,
)
from quire_worker.processors.child_runner import run_child
from quire_worker.processors.runtime_versions import MISSING, installed_version

OPERATION = "pdf.index.text/v1"
CHILD_MODULE = "quire_worker.processors.pdf.index_text_child"
PAGES_MEDIA_TYPE = "application/json"
MAX_PAGES = 2000
MAX_PAGE_CHARS = 100_000
MAX_TOTAL_CHARS = 20_000_000
TIME_BUDGET_SECONDS = 240.0


class PdfTextProcessor:
    operation = OPERATION

    def __init__(
        self,
        *,
        max_pages: int = MAX_PAGES,
        max_page_chars: int = MAX_PAGE_CHARS,
        max_total_chars: int = MAX_TOTAL_CHARS,
        time_budget_seconds: float = TIME_BUDGET_SECONDS,
    ):
        self.settings = {
            "max_pages": max_pages,
            "max_page_chars": max_page_chars,
            "max_total_chars": max_total_chars,
            "time_budget_seconds": time_budget_seconds,
        }
        self.runtime_version = "pypdf/" + installed_version("pypdf")
        self.contract = f"quire-pdf-text/1 {self.runtime_version} pages-{max_pages} chars-{max_page_chars}"

    def unavailable_reason(self) -> str | None:
        return "PDF indexing needs the Python package pypdf." if installed_version("pypdf") == MISSING else None

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
        reason = self.unavailable_reason()
        if reason:
            raise ProcessorFailure(FailureClass.UNSUPPORTED_DEPENDENCY, "dependency_missing", reason)
        budget = min(self.settings["time_budget_seconds"], max(limits.wall_seconds - 5, 1))
        outcome = run_child(
            module=CHILD_MODULE,
            input_dir=input_dir,
            output_dir=output_dir,
            settings={**self.settings, "time_budget_seconds": budget},
            limits=limits,
            cancel=cancel,
            executor=executor,
        )
        pages_path = output_dir / "pages.json"
        _validate_pages(pages_path, limits)
        return ProcessorResult(
            outputs=(OutputFile("pages", pages_path, PAGES_MEDIA_TYPE, "pages.json"),),
            diagnostics=outcome.diagnostics,
        )


def _validate_pages(path: Path, limits: Limits) -> None:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > limits.output_bytes:
        raise _violation("pages_missing", "The extraction left no pages file within the size limit.")
    try:
        pages = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _violation("pages_invalid", "The extracted pages are not JSON.") from exc
    if (
        not isinstance(pages, dict)
        or pages.get("schema") != PDF_PAGES_SCHEMA
        or not isinstance(pages.get("pages"), list)
    ):
        raise _violation("pages_invalid", "The extracted pages have the wrong schema.")


def _violation(code: str, message: str) -> ProcessorFailure:
    return ProcessorFailure(FailureClass.INTERNAL_CONTRACT_VIOLATION, code, message)
