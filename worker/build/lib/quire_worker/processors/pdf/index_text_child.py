"""Sandboxed child of ``pdf.index.text/v1``: ``input.pdf`` → ``pages.json`` (``pdf-pages/v1``).

Run as ``python -m quire_worker.processors.pdf.index_text_child --input IN --output OUT
--settings JSON`` (see ``child_protocol``). Settings: ``max_pages``, ``max_page_chars``,
``max_total_chars``, ``time_budget_seconds``.

Output: ``{"schema": "pdf-pages/v1", "page_count", "indexed_pages", "truncated",
"pages": [{"number", "text"}]}``. Pages past ``max_pages`` and characters past the
per-page and total bounds are left out and ``truncated`` says so; a single page whose
text cannot be extracted is indexed empty with a warning rather than failing the version.
"""

import json
import time
from dataclasses import dataclass

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from quire_wire import PDF_PAGES_SCHEMA
from quire_worker.processors.child_protocol import (
    ChildArguments,
    ConversionFailure,
    child_main,
    diagnostic_entry,
)

PAGES_NAME = "pages.json"
SCHEMA = PDF_PAGES_SCHEMA
MAX_WARNINGS = 50


@dataclass(frozen=True)
class ExtractionBounds:
    max_pages: int
    max_page_chars: int
    max_total_chars: int
    time_budget_seconds: float


def _open(arguments: ChildArguments) -> PdfReader:
    try:
        reader = PdfReader(arguments.input_dir / "input.pdf", strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise ConversionFailure("invalid_input", "pdf_encrypted", "The PDF is protected by a password.")
        len(reader.pages)  # reads the page tree: a damaged one fails here, classified
    except FileNotDecryptedError as exc:
        raise ConversionFailure("invalid_input", "pdf_encrypted", "The PDF is protected by a password.") from exc
    except (NotImplementedError, DependencyError) as exc:
        raise ConversionFailure("invalid_input", "pdf_encrypted", "The PDF's encryption is not supported.") from exc
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise ConversionFailure("invalid_input", "pdf_corrupt", f"The PDF cannot be read: {exc}"[:500]) from exc
    return reader


def _page_text(reader: PdfReader, index: int, warnings: list[dict]) -> str:
    try:
        return reader.pages[index].extract_text() or ""
    except Exception as exc:  # one damaged page is indexed empty; the version stays searchable
        if len(warnings) < MAX_WARNINGS:
            warnings.append(
                diagnostic_entry(f"Page {index + 1}: text not extractable ({type(exc).__name__}).", severity="warning")
            )
        return ""


def extract(reader: PdfReader, bounds: ExtractionBounds, warnings: list[dict]) -> dict:
    page_count = len(reader.pages)
    deadline = time.monotonic() + bounds.time_budget_seconds
    pages, total, truncated = [], 0, page_count > bounds.max_pages
    for index in range(min(page_count, bounds.max_pages)):
        if time.monotonic() >= deadline:
            raise ConversionFailure(
                "resource_limit",
                "extraction_time_exceeded",
                f"Extracting text took longer than {bounds.time_budget_seconds:g} s (at page {index + 1}).",
            )
        text = _page_text(reader, index, warnings).replace("\x00", " ")
        kept = text[: min(bounds.max_page_chars, bounds.max_total_chars - total)]
        truncated = truncated or len(kept) < len(text)
        total += len(kept)
        pages.append({"number": index + 1, "text": kept})
    return {
        "schema": SCHEMA,
        "page_count": page_count,
        "indexed_pages": len(pages),
        "truncated": truncated,
        "pages": pages,
    }


def convert(arguments: ChildArguments) -> tuple[dict, ...]:
    bounds = ExtractionBounds(**arguments.settings)
    reader = _open(arguments)
    warnings: list[dict] = []
    result = extract(reader, bounds, warnings)
    if result["truncated"]:
        warnings.append(diagnostic_entry("Only part of the text was indexed (page or size bounds).", severity="info"))
    (arguments.output_dir / PAGES_NAME).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")
    return tuple(warnings)


if __name__ == "__main__":
    raise SystemExit(child_main(convert))
