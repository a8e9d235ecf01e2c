"""The Typst→PPTX export's report (``typst-export-report/v1``)."""

from quire_worker.processors.pptx.text_boxes import FontMapping
from quire_worker.processors.pptx.writing import EMU_PER_POINT, SlideSize
from quire_worker.processors.typst.page_text import PageText
from quire_worker.processors.typst.project import TypstProject

SCHEMA = "typst-export-report/v1"
DETERMINISM = (
    "The same project content and source epoch give a byte-identical PPTX: pages are laid out and rendered "
    "with Typst's embedded fonts and the project's own font files only (never the host's), zip entries carry "
    "fixed timestamps, and the document properties come from the project's source epoch."
)


def export_report(project: TypstProject, *, rendering, size: SlideSize, settings, fonts: FontMapping) -> dict:
    """``rendering`` is the child's ``Rendering``; ``settings`` its ``ExportSettings``."""
    page_sizes = [[round(page.width_pt, 2), round(page.height_pt, 2)] for page in rendering.pages]
    slides = [
        _slide_entry(number, text, page)
        for number, (text, page) in enumerate(zip(rendering.texts, rendering.pages, strict=True), start=1)
    ]
    return {
        "schema": SCHEMA,
        "entry_path": project.entry_path,
        "pages": len(rendering.pages),
        "page_sizes_pt": page_sizes,
        "slide_size": {
            "width_emu": size.width_emu,
            "height_emu": size.height_emu,
            "width_pt": round(size.width_emu / EMU_PER_POINT, 2),
            "height_pt": round(size.height_emu / EMU_PER_POINT, 2),
        },
        "image": {"format": "png", "ppi": rendering.ppi},
        "fonts": rendering.fonts,
        "font_mapping": [{"typst": typst, "powerpoint": office} for typst, office in sorted(fonts.mapped.items())],
        "editable_words": sum(slide["editable_words"] for slide in slides),
        "slides": slides,
        "warnings": [
            {"file": item["file"], "line": item["line"], "message": item["message"]} for item in rendering.warnings
        ],
        "notes": _notes(page_sizes, rendering.ppi, size, settings),
        "deterministic": True,
        "determinism": DETERMINISM,
    }


def _notes(page_sizes: list[list[float]], ppi: float, size: SlideSize, settings) -> list[str]:
    notes = []
    if ppi < settings.target_ppi:
        notes.append(
            f"Rendered at {ppi} ppi instead of {settings.target_ppi} to keep pages within "
            f"{settings.max_page_pixels} pixels."
        )
    if len({tuple(item) for item in page_sizes}) > 1:
        notes.append("Pages differ in size; the slide size follows page 1 and other pages are fitted and centred.")
    if size.scaled:
        notes.append("The page size is outside PowerPoint's 1 to 56 inch range; slides were scaled to fit it.")
    return notes


def _slide_entry(number: int, text: PageText, page) -> dict:
    """What became editable text on a slide and what became pictures."""
    return {
        "number": number,
        "text_boxes": len(text.lines),
        "editable_words": sum(len(line.text.split()) for line in text.lines),
        "list_items": sum(1 for line in text.lines if line.bullet),
        "links": sorted({run.link for line in text.lines for run in line.runs if run.link}),
        "picture": "the page without its text and formulas: shapes, figures, backgrounds",
        "formulas": [formula.source for formula in page.formulas],
        "formula_words_in_pictures": text.formula_words,
    }
