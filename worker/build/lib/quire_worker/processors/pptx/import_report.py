"""The PPTX import's conversion report (``pptx-import-report/v1``), shown in the task center."""

import hashlib

from quire_worker.processors.pptx.slide_model import (
    ConversionReport,
    Deck,
    FilledShape,
    PictureBlock,
    Slide,
    TableBlock,
    TextBlock,
)
from quire_worker.processors.workspace_bundle import WorkspaceBundle

SCHEMA = "pptx-import-report/v1"
_NAMED_ASPECTS = {"16:9": 16 / 9, "16:10": 16 / 10, "4:3": 4 / 3, "1:1": 1.0, "3:4": 3 / 4, "9:16": 9 / 16}


def import_report(
    deck: Deck,
    *,
    report: ConversionReport,
    bundle: WorkspaceBundle,
    profile: str,
    source_name: str,
    compile_warnings: list[str],
) -> dict:
    return {
        "schema": SCHEMA,
        "source": {
            "filename": source_name,
            "slides": len(deck.slides),
            "width_pt": round(deck.width, 2),
            "height_pt": round(deck.height, 2),
            "aspect_ratio": aspect_ratio(deck.width, deck.height),
        },
        "profile": profile,
        "entry_path": bundle.entry_path,
        "summary": {
            "approximated": report.counts("approximated"),
            "dropped": report.counts("dropped"),
        },
        "deck": _entries(report.for_slide(0)),
        "slides": [_slide_entry(slide, report) for slide in deck.slides],
        "files": [
            {
                "path": item.path,
                "kind": item.kind,
                "length": len(item.data),
                "sha256": hashlib.sha256(item.data).hexdigest(),
            }
            for item in bundle.files
        ],
        "compile_warnings": compile_warnings,
    }


def aspect_ratio(width: float, height: float) -> str:
    ratio = width / height if height else 0.0
    for name, value in _NAMED_ASPECTS.items():
        if abs(ratio - value) <= 0.01 * value:
            return name
    return f"{ratio:.3f}:1"


def _slide_entry(slide: Slide, report: ConversionReport) -> dict:
    items = report.for_slide(slide.number)
    return {
        "number": slide.number,
        "title": slide.title,
        "hidden": slide.hidden,
        "has_notes": bool(slide.notes.strip()),
        "converted": {
            "text_boxes": sum(isinstance(block, TextBlock) for block in slide.blocks),
            "tables": sum(isinstance(block, TableBlock) for block in slide.blocks),
            "pictures": sum(isinstance(block, PictureBlock) for block in slide.blocks),
            "shapes": sum(isinstance(block, FilledShape) for block in slide.blocks),
        },
        "background": slide.background_path,
        "approximated": _entries([item for item in items if item["category"] == "approximated"]),
        "dropped": _entries([item for item in items if item["category"] == "dropped"]),
    }


def _entries(items: list[dict]) -> list[dict]:
    return [{"kind": item["kind"], "shape": item["shape"], "detail": item["detail"]} for item in items]
