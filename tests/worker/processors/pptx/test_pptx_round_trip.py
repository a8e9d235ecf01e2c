"""PPTX → import (editable) → Typst → export → PPTX keeps every word as editable text and each shape in place."""

import io
import json
from pathlib import Path

import pytest
from PIL import Image
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.shapes import MSO_SHAPE, MSO_SHAPE_TYPE
from pptx.util import Emu, Inches, Pt

from quire_worker.processors.workspace_bundle import read_bundle
from tests.worker.conftest import pptx_imported, typst_exported
from tests.worker.pptx_decks import BLANK_LAYOUT, BULLETS_LAYOUT, five_slide_deck, picture_png, saved
from tests.worker.processors.pptx.test_import_round_trip import outputs_by_role

POINT = 12700
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


def placed_deck() -> bytes:
    """Text boxes at known places, a filled rectangle, bullets and a table."""
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[BLANK_LAYOUT])
    for index, (left, top, text) in enumerate(((1, 1, "North star metric"), (5, 2.5, "Second box here"))):
        box = slide.shapes.add_textbox(Inches(left), Inches(top), Inches(3.5), Inches(0.8))
        box.text_frame.text = text
        box.text_frame.paragraphs[0].runs[0].font.size = Pt(24 + 4 * index)
    square = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(1), Inches(4.5), Inches(2), Inches(2))
    square.fill.solid()
    square.fill.fore_color.rgb = RGBColor(0x2E, 0x8B, 0x57)
    square.line.fill.background()
    bullets = presentation.slides.add_slide(presentation.slide_layouts[BULLETS_LAYOUT])
    bullets.shapes.title.text = "Plan"
    bullets.placeholders[1].text_frame.text = "Hire two engineers"
    bullets.placeholders[1].text_frame.add_paragraph().text = "Ship the importer"
    return saved(presentation)


def round_trip(data: bytes, root: Path):
    imported = pptx_imported(data, root / "import")
    bundle = read_bundle(outputs_by_role(imported)["bundle"].path, max_files=200, max_expanded_bytes=64 * 1024**2)
    files = {item.path: item.data.decode() if item.kind == "text" else item.data for item in bundle.files}
    exported = typst_exported(files, root / "export", entry_path=bundle.entry_path)
    report = json.loads(outputs_by_role(exported)["report"].path.read_text())
    return Presentation(outputs_by_role(exported)["pptx"].path), report


@pytest.fixture(scope="module")
def placed(tmp_path_factory):
    return round_trip(placed_deck(), tmp_path_factory.mktemp("placed"))


def frame_words(presentation) -> list[str]:
    return sorted(
        word for slide in presentation.slides for shape in slide.shapes if shape.has_text_frame
        for word in shape.text_frame.text.split()
    )  # fmt: skip


def test_every_word_survives_as_editable_text(placed):
    presentation, report = placed

    assert frame_words(presentation) == frame_words(Presentation(io.BytesIO(placed_deck())))
    assert report["editable_words"] == len(frame_words(presentation))


def test_text_boxes_stay_where_they_were(placed):
    presentation, _ = placed
    source = Presentation(io.BytesIO(placed_deck())).slides[0]

    exported = {shape.text_frame.text: shape for shape in presentation.slides[0].shapes if shape.has_text_frame}
    for shape in source.shapes:
        if not shape.has_text_frame or not shape.text_frame.text:
            continue
        box = exported[shape.text_frame.text]
        size = shape.text_frame.paragraphs[0].runs[0].font.size.pt
        # The import keeps PowerPoint's insets (7.2 pt, 3.6 pt); the first baseline sits an ascent below.
        assert abs(Emu(box.left).pt - (Emu(shape.left).pt + 7.2)) < 1
        assert abs(Emu(box.top).pt - (Emu(shape.top).pt + 3.6)) < 0.35 * size


def test_a_shape_is_drawn_in_place_in_the_slides_picture(placed):
    presentation, _ = placed
    slide = presentation.slides[0]

    picture = next(shape for shape in slide.shapes if shape.shape_type == MSO_SHAPE_TYPE.PICTURE)
    with Image.open(io.BytesIO(picture.image.blob)) as image:
        scale = image.width / (presentation.slide_width / POINT)
        centre = (round(2 * 72 * scale), round(5.5 * 72 * scale))  # the square's centre: 2 in, 5.5 in
        outside = (round(4 * 72 * scale), round(5.5 * 72 * scale))
        assert image.convert("RGB").getpixel(centre) == (0x2E, 0x8B, 0x57)
        assert image.convert("RGB").getpixel(outside) == (255, 255, 255)


def test_bullets_come_back_as_list_paragraphs(placed):
    presentation, _ = placed

    paragraphs = [
        paragraph for shape in presentation.slides[1].shapes if shape.has_text_frame
        for paragraph in shape.text_frame.paragraphs if paragraph.text in ("Hire two engineers", "Ship the importer")
    ]  # fmt: skip
    assert len(paragraphs) == 2
    assert all(paragraph._p.pPr.find(f"{A}buChar") is not None for paragraph in paragraphs)


def test_a_deck_with_a_table_picture_and_notes_keeps_its_words(tmp_path):
    data, facts = five_slide_deck(picture_png())

    presentation, _ = round_trip(data, tmp_path)

    words = frame_words(presentation)
    for slide in facts:
        for text in (slide.title, *slide.texts):
            for word in text.split():
                assert word in words, f"{word!r} of {text!r} is not editable after the round trip"
