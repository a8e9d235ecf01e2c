"""A Typst project exports to a PPTX with a slide per page: a picture of what is not text, the text over it."""

import io
import json
from pathlib import Path

import typst
from PIL import Image
from pptx import Presentation
from pptx.enum.shapes import MSO_SHAPE_TYPE

from quire_worker.processors.typst.export_pptx import TARGET_PPI
from tests.worker.conftest import write_project_bundle

THREE_PAGES = {
    "main.typ": '#set page(paper: "presentation-16-9")\n#set text(size: 48pt)\n'
    "= First page\nThe plan.\n#pagebreak()\n= Second page\n$ e^(i pi) + 1 = 0 $\n"
    '#pagebreak()\n#include "chapters/third.typ"\n',
    "chapters/third.typ": "= Third page\n`print('done')`\n",
}


def outputs_by_role(result) -> dict:
    return {output.role: output for output in result.outputs}


def typst_pages(files: dict[str, str], tmp_path: Path) -> list[bytes]:
    """The test's own rendering of each page, at the export's resolution."""
    root = write_project_bundle(tmp_path / "reference", files, entry_path="main.typ", project_type="typst")
    return typst.compile(str(root / "main.typ"), root=str(root), format="png", ppi=TARGET_PPI, ignore_system_fonts=True)


def test_three_pages_become_three_slides_with_the_text_as_text_over_a_picture_of_the_rest(export_typst, tmp_path):
    full_pages = typst_pages(THREE_PAGES, tmp_path)

    result = export_typst(THREE_PAGES)

    presentation = Presentation(outputs_by_role(result)["pptx"].path)
    assert len(presentation.slides) == 3
    texts = [slide_text(slide) for slide in presentation.slides]
    assert "First page" in texts[0] and "The plan." in texts[0]
    assert "Second page" in texts[1] and "Third page" in texts[2] and "print('done')" in texts[2]
    pictures = [picture_of(slide) for slide in presentation.slides]
    assert [picture.image.blob != page for picture, page in zip(pictures, full_pages, strict=True)] == [True] * 3
    assert {colours(picture.image.blob) for picture in pictures} == {1}, "text and formulas are not painted twice"
    formula = next(shape for shape in presentation.slides[1].shapes if shape.name == "Formula 1")
    assert colours(formula.image.blob) > 1, "the formula is a picture of its own"
    assert formula._element.nvPicPr.cNvPr.get("descr") == "e^(i π) + 1 = 0"
    assert "e" not in texts[1].replace("Second page", "").split(), "nor is it text"


def slide_text(slide) -> str:
    return "\n".join(shape.text_frame.text for shape in slide.shapes if shape.has_text_frame)


def picture_of(slide):
    """The slide's page picture (formulas have pictures of their own)."""
    pictures = [shape for shape in slide.shapes if shape.shape_type == MSO_SHAPE_TYPE.PICTURE]
    pictures = [shape for shape in pictures if shape.name.startswith("Page")]
    assert len(pictures) == 1
    return pictures[0]


def colours(png: bytes) -> int:
    with Image.open(io.BytesIO(png)) as image:
        return len(image.convert("RGB").getcolors(maxcolors=1 << 24))


def test_slides_have_the_pages_aspect_ratio_and_the_picture_fills_them(export_typst):
    result = export_typst(THREE_PAGES)

    presentation = Presentation(outputs_by_role(result)["pptx"].path)
    assert abs(presentation.slide_width / presentation.slide_height - 841.89 / 473.56) < 1e-4
    picture = presentation.slides[0].shapes[0]
    assert (picture.left, picture.top) == (0, 0)
    assert (picture.width, picture.height) == (presentation.slide_width, presentation.slide_height)


def test_outputs_are_named_after_the_entry_file_with_their_media_types(export_typst):
    files = {"slides.typ": THREE_PAGES["main.typ"], "chapters/third.typ": THREE_PAGES["chapters/third.typ"]}

    result = export_typst(files, entry_path="slides.typ")

    roles = {output.role: (output.media_type, output.filename) for output in result.outputs}
    assert roles == {
        "pptx": ("application/vnd.openxmlformats-officedocument.presentationml.presentation", "slides.pptx"),
        "report": ("application/json", "export-report.json"),
    }


def test_the_same_project_exports_to_the_same_pptx_bytes(export_typst):
    first = outputs_by_role(export_typst(THREE_PAGES))["pptx"].path.read_bytes()
    second = outputs_by_role(export_typst(THREE_PAGES))["pptx"].path.read_bytes()

    assert first == second


def test_report_lists_pages_fonts_resolution_and_determinism(export_typst):
    result = export_typst(THREE_PAGES)

    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    assert report["pages"] == 3 and report["entry_path"] == "main.typ"
    assert report["page_sizes_pt"] == [[841.89, 473.56]] * 3
    assert report["image"] == {"format": "png", "ppi": TARGET_PPI}
    # headings (bold), body text, math and raw text, all from Typst's embedded fonts
    assert report["fonts"] == [
        "DejaVuSansMono",
        "LibertinusSerif-Bold",
        "LibertinusSerif-Regular",
        "NewCMMath-Book",
    ]
    assert report["deterministic"] is True and report["warnings"] == []


def test_compiler_warnings_reach_the_report_with_file_and_line(export_typst):
    files = {"main.typ": 'Intro\n#set text(font: "No Such Family")\nBody\n'}

    result = export_typst(files)

    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    assert [(warning["file"], warning["line"]) for warning in report["warnings"]] == [("main.typ", 2)]
    assert "no such family" in report["warnings"][0]["message"]


def test_the_compiler_runs_without_a_network(export_typst):
    result = export_typst(THREE_PAGES)

    notes = [entry.message for entry in result.diagnostics.entries if entry.severity == "info"]
    assert any(note.startswith("compiler network: ") for note in notes)


def test_a_page_too_large_for_the_pixel_budget_is_rendered_at_a_lower_resolution(export_typst):
    result = export_typst({"main.typ": "#set page(width: 100in, height: 50in)\nA poster\n"})

    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    assert report["image"]["ppi"] < TARGET_PPI
    presentation = Presentation(outputs_by_role(result)["pptx"].path)
    width, height = _png_size(presentation.slides[0].shapes[0].image.blob)
    assert width * height <= 16_000_000
    assert presentation.slide_width == 56 * 914400, "PowerPoint's largest slide side"
    assert any("1 to 56 inch" in note for note in report["notes"])


def _png_size(png: bytes) -> tuple[int, int]:
    header = io.BytesIO(png).getbuffer()[16:24]
    return int.from_bytes(header[:4], "big"), int.from_bytes(header[4:], "big")
