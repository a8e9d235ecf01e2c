"""Shapes land on the Typst page where PowerPoint draws them, also inside moved and scaled groups."""

import io

from pptx.util import Inches

from quire_worker.processors.workspace_bundle import read_bundle
from tests.worker.pptx_decks import BLANK_LAYOUT, picture_png, saved, widescreen_presentation


def imported_source(import_pptx, data: bytes) -> str:
    result = import_pptx(data)
    bundle_path = next(output.path for output in result.outputs if output.role == "bundle")
    bundle = read_bundle(bundle_path, max_files=100, max_expanded_bytes=64 * 1024**2)
    return next(item.data for item in bundle.files if item.path == "main.typ").decode()


def test_a_shape_in_a_moved_and_scaled_group_is_placed_in_slide_coordinates(import_pptx):
    presentation = widescreen_presentation()
    shapes = presentation.slides.add_slide(presentation.slide_layouts[BLANK_LAYOUT]).shapes
    group = shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(1), Inches(2), Inches(1)).text_frame.text = "grouped"
    group.left, group.top = Inches(3), Inches(2)  # the group's inside keeps its own coordinates…
    group.width, group.height = Inches(4), Inches(2)  # …and is drawn twice as large

    source = imported_source(import_pptx, saved(presentation))

    assert "#place(top + left, dx: 216pt, dy: 144pt, block(width: 288pt, height: 144pt," in source


def test_a_cropped_rotated_picture_is_clipped_and_turned(import_pptx):
    presentation = widescreen_presentation()
    shapes = presentation.slides.add_slide(presentation.slide_layouts[BLANK_LAYOUT]).shapes
    picture = shapes.add_picture(io.BytesIO(picture_png()), Inches(1), Inches(1), Inches(3), Inches(2))
    picture.crop_left, picture.crop_right, picture.rotation = 0.25, 0.25, 90

    source = imported_source(import_pptx, saved(presentation))

    assert "rotate(90deg, reflow: false, box(width: 216pt, height: 144pt, clip: true, " in source
    assert 'place(top + left, dx: -108pt, dy: 0pt, image("assets/image-01.png", width: 432pt, height: 144pt' in source
