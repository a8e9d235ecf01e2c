"""``typst.export.pptx/v1``: a captured Typst project becomes a PPTX, a slide per page whose text is text.

Each slide holds a picture of its page without the text (shapes, figures, backgrounds and formulas), and
over it the page's text as text boxes at their places, with their fonts (mapped to fonts PowerPoint has),
sizes, weights, styles, colours and links, list items as list paragraphs (``page_text``, ``text_boxes``).
The report says, slide by slide, how many words are editable and what is in the picture.

This orchestrator runs in the worker; compilation and PPTX assembly run in
``typst_export_child`` inside the sandbox, and the outputs are checked again here.

Resolution: pages are rendered at 192 ppi — twice the 96 px-per-inch of a standard screen —
so a 16:9 slide page (Typst's ``presentation-16-9`` is 11.7 in wide, PowerPoint's default
13.3 in) becomes 2245 to 2560 px wide: sharper than a full-HD projector needs and crisp on a
HiDPI laptop, at a few hundred kilobytes per slide. Larger pages get a lower ppi so that
no page exceeds 16 megapixels.
"""

import json
import threading
import zipfile
from pathlib import Path, PurePosixPath

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

OPERATION = "typst.export.pptx/v1"
CHILD_MODULE = "quire_worker.processors.typst.export_pptx_child"
PPTX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
REPORT_MEDIA_TYPE = "application/json"
TARGET_PPI = 192
MAX_PAGE_PIXELS = 16_000_000
MAX_PAGES = 500
MAX_REPORT_BYTES = 4 * 1024 * 1024
_LIBRARIES = ("typst", "python-pptx")


class TypstExportProcessor:
    operation = OPERATION

    def __init__(
        self,
        *,
        max_pages: int = MAX_PAGES,
        target_ppi: float = TARGET_PPI,
        max_page_pixels: int = MAX_PAGE_PIXELS,
    ):
        self.settings = {"max_pages": max_pages, "target_ppi": target_ppi, "max_page_pixels": max_page_pixels}
        self.runtime_version = " ".join(f"{name}/{installed_version(name)}" for name in _LIBRARIES)
        self.contract = f"quire-typst-pptx/2 {self.runtime_version} png-{target_ppi}ppi embedded-fonts text-boxes"

    def unavailable_reason(self) -> str | None:
        missing = [name for name in _LIBRARIES if installed_version(name) == MISSING]
        return f"The Typst export needs the Python packages {', '.join(missing)}." if missing else None

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
        outcome = run_child(
            module=CHILD_MODULE,
            input_dir=input_dir,
            output_dir=output_dir,
            settings=self.settings,
            limits=limits,
            cancel=cancel,
            executor=executor,
        )
        pptx_path, report_path = output_dir / "output.pptx", output_dir / "report.json"
        _validate_pptx(pptx_path, limits)
        entry_path = _validated_report(report_path)
        return ProcessorResult(
            outputs=(
                OutputFile("pptx", pptx_path, PPTX_MEDIA_TYPE, _pptx_filename(entry_path)),
                OutputFile("report", report_path, REPORT_MEDIA_TYPE, "export-report.json"),
            ),
            diagnostics=outcome.diagnostics,
        )


def _pptx_filename(entry_path: str) -> str:
    stem = PurePosixPath(entry_path).stem
    safe = "".join(char if char.isalnum() or char in "-_." else "_" for char in stem).strip(".")
    return f"{safe[:100] or 'presentation'}.pptx"


def _validate_pptx(path: Path, limits: Limits) -> None:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > limits.output_bytes:
        raise _contract_violation("pptx_missing", "The export left no PPTX within the size limit.")
    try:
        with zipfile.ZipFile(path) as package:
            names = set(package.namelist())
    except zipfile.BadZipFile as exc:
        raise _contract_violation("pptx_invalid", "The export's PPTX is not a zip package.") from exc
    if not {"[Content_Types].xml", "ppt/presentation.xml"} <= names:
        raise _contract_violation("pptx_invalid", "The export's PPTX is not a presentation package.")


def _validated_report(path: Path) -> str:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_REPORT_BYTES:
        raise _contract_violation("report_missing", "The export left no report within the size limit.")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _contract_violation("report_invalid", "The export report is not JSON.") from exc
    if not isinstance(report, dict) or report.get("schema") != "typst-export-report/v1":
        raise _contract_violation("report_invalid", "The export report has the wrong schema.")
    return str(report.get("entry_path") or "presentation.typ")


def _contract_violation(code: str, message: str) -> ProcessorFailure:
    return ProcessorFailure(FailureClass.INTERNAL_CONTRACT_VIOLATION, code, message)
