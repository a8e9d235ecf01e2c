"""The editable import keeps a deck's look: theme colours with their modifiers for fills, outlines and text,
vertical anchoring, insets, autofit, alignment, and fonts mapped to files the project's build has."""

import json
import shutil
from pathlib import Path

import pytest
import typst
from lxml import etree
from pptx import Presentation
from pptx.dml.color import RGBColor
from pptx.enum.dml import MSO_THEME_COLOR
from pptx.enum.shapes import MSO_SHAPE
from pptx.enum.text import MSO_ANCHOR, PP_ALIGN
from pptx.util import Inches, Pt

from quire_worker.processors.pptx.fonts import FontMapper, symbol_text
from quire_worker.processors.pptx.theme import A, Theme
from tests.worker.conftest import pptx_imported
from tests.worker.pptx_decks import BLANK_LAYOUT, TITLE_LAYOUT, saved
from tests.worker.processors.pptx.test_import_round_trip import outputs_by_role, unpacked_project

OFFICE_2007 = {
    "dk1": "000000",
    "lt1": "ffffff",
    "dk2": "1f497d",
    "lt2": "eeece1",
    "accent1": "4f81bd",
    "accent2": "c0504d",
    "accent6": "f79646",
}  # fmt: skip  python-pptx's default theme


def color_element(xml: str):
    return etree.fromstring(f'<a:root xmlns:a="{A[1:-1]}">{xml}</a:root>')[0]


@pytest.mark.parametrize(
    ("xml", "expected"),
    [
        ('<a:schemeClr val="accent1"/>', "4f81bd"),
        ('<a:schemeClr val="tx1"/>', "000000"),  # through the colour map: tx1 is dk1
        ('<a:schemeClr val="bg2"/>', "eeece1"),
        ('<a:schemeClr val="accent1"><a:lumMod val="75000"/></a:schemeClr>', "376092"),  # PowerPoint's "darker 25%"
        ('<a:schemeClr val="accent1"><a:lumMod val="60000"/><a:lumOff val="40000"/></a:schemeClr>', "95b3d7"),
        ('<a:srgbClr val="FF0000"><a:tint val="50000"/></a:srgbClr>', "ffbcbc"),  # half white, in linear light
        ('<a:srgbClr val="FF0000"><a:shade val="50000"/></a:srgbClr>', "bc0000"),
        ('<a:sysClr val="windowText" lastClr="000000"/>', "000000"),
        ('<a:prstClr val="white"/>', "ffffff"),
    ],
)
def test_scheme_colours_and_their_modifiers_resolve_as_powerpoint_draws_them(xml, expected):
    theme = Theme(scheme=OFFICE_2007)

    assert theme.color(color_element(xml)) == expected


def test_a_placeholder_colour_is_the_one_the_style_reference_gives():
    theme = Theme(scheme=OFFICE_2007)

    assert theme.color(color_element('<a:schemeClr val="phClr"><a:shade val="50000"/></a:schemeClr>'), "4f81bd") == (
        theme.color(color_element('<a:srgbClr val="4F81BD"><a:shade val="50000"/></a:srgbClr>'))
    )


def styled_deck() -> bytes:
    """A default (theme-styled) rectangle, a themed fill and outline, anchors, insets, autofit, fonts."""
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[BLANK_LAYOUT])
    themed = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(1), Inches(1), Inches(3), Inches(1.5))
    themed.text_frame.text = "White on accent one"  # the shape style's fontRef: lt1
    fill_and_line = slide.shapes.add_shape(MSO_SHAPE.RECTANGLE, Inches(5), Inches(1), Inches(3), Inches(1.5))
    fill_and_line.fill.solid()
    fill_and_line.fill.fore_color.theme_color = MSO_THEME_COLOR.ACCENT_2
    fill_and_line.fill.fore_color.brightness = 0.4
    fill_and_line.line.color.theme_color = MSO_THEME_COLOR.ACCENT_6
    fill_and_line.line.width = Pt(3)
    frame = fill_and_line.text_frame
    frame.text = "Bottom right"
    frame.vertical_anchor = MSO_ANCHOR.BOTTOM
    frame.margin_left = frame.margin_right = Inches(0.5)
    frame.paragraphs[0].alignment = PP_ALIGN.RIGHT
    run = frame.paragraphs[0].runs[0]
    run.font.color.theme_color = MSO_THEME_COLOR.ACCENT_1
    run.font.name = "Arial"
    box = slide.shapes.add_textbox(Inches(1), Inches(4), Inches(6), Inches(1))
    box.text_frame.text = "Shrunk to fit"
    box.text_frame.paragraphs[0].runs[0].font.size = Pt(40)
    body = box.text_frame._txBody.bodyPr
    etree.SubElement(body, f"{A}normAutofit", fontScale="62500", lnSpcReduction="20000")
    symbols = slide.shapes.add_textbox(Inches(1), Inches(5.5), Inches(6), Inches(1))
    symbols.text_frame.text = "abp"
    symbols.text_frame.paragraphs[0].runs[0].font.name = "Symbol"
    cjk = slide.shapes.add_textbox(Inches(1), Inches(6.5), Inches(6), Inches(0.8))
    cjk.text_frame.text = "日本語のスライド"
    return saved(presentation)


@pytest.fixture(scope="module")
def styled_import(tmp_path_factory):
    """The styled deck imported once (editable), unpacked, with its source and report."""
    result = pptx_imported(styled_deck(), tmp_path_factory.mktemp("runs"))
    root = tmp_path_factory.mktemp("styled")
    bundle = unpacked_project(result, root)
    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    return root, bundle, (root / "main.typ").read_text(), report


def test_a_theme_styled_shape_keeps_its_accent_fill_outline_and_white_text(styled_import):
    _, _, source, _ = styled_import

    # python-pptx's default shape: fillRef 3 (a gradient of accent1), lnRef 1 (accent1 shaded), fontRef lt1
    assert 'rect(width: 216pt, height: 108pt, fill: rgb("#' in source
    themed = source.split("White on accent one")[0].rsplit("#place", 2)
    assert 'fill: rgb("#ffffff")' in themed[-1], "the text takes the style's lt1"
    assert 'stroke: 0.75pt + rgb("#' in themed[-2]


def test_a_themed_fill_and_outline_keep_their_colours_and_width(styled_import):
    _, _, source, _ = styled_import

    assert 'fill: rgb("#d99694"), stroke: 3pt + rgb("#f79646")' in source  # accent2 lighter 40%, accent6


def test_text_keeps_its_anchor_insets_alignment_and_theme_colour(styled_import):
    _, _, source, _ = styled_import

    placed = source.split("Bottom right")[0].rsplit("#place", 1)[-1]
    assert "inset: (left: 36pt, top: 3.6pt, right: 36pt, bottom: 3.6pt)" in placed
    assert "#align(bottom)[" in placed and "#align(right)[" in placed
    assert 'fill: rgb("#4f81bd")' in placed


def test_autofit_shrinks_the_text_and_its_line_spacing(styled_import):
    _, _, source, _ = styled_import

    placed = source.split("Shrunk to fit")[0].rsplit("#place", 1)[-1]
    assert "#set text(size: 25pt" in placed  # 40pt at 62.5 %
    assert "#set par(leading: 0.52em)" in placed  # 20 % less


def test_fonts_map_to_files_in_the_project_and_the_report_names_each_substitution(styled_import):
    root, bundle, source, report = styled_import

    fonts = sorted(item.path for item in bundle.files if item.path.startswith("fonts/"))
    assert "fonts/Carlito-Regular.ttf" in fonts and "fonts/LiberationSans-Bold.ttf" in fonts
    assert "fonts/DroidSansFallbackFull.ttf" in fonts, "East Asian text gets a font with CJK glyphs"
    assert 'font: "Liberation Sans"' in source and 'font: "Carlito"' in source
    details = [item["detail"] for item in report["deck"] if item["kind"] == "font"]
    assert "Calibri → Carlito (metric-compatible)" in details
    assert "Arial → Liberation Sans (metric-compatible)" in details
    assert "αβπ" in source, "Symbol's letters become the Greek ones they draw"
    pdf = typst.compile(str(root / "main.typ"), root=str(root), font_paths=[str(root)], ignore_system_fonts=True)
    assert b"Carlito" in pdf and b"LiberationSans" in pdf and b"DroidSansFallback" in pdf


def test_a_family_whose_substitute_is_missing_falls_back_and_says_so(tmp_path):
    mapper = FontMapper(font_root=tmp_path)

    assert mapper.family("Calibri") is None
    assert mapper.substitutions == {"Calibri": "Calibri → Typst's default font (no Carlito on the worker)"}
    assert mapper.files() == {}


def test_wingdings_bullets_become_unicode():
    assert symbol_text("\uf0a7 \uf0d8 \uf0fc", "Wingdings") == "▪ ➢ ✓"


def dark_theme_deck() -> bytes:
    """A title slide on a master whose colour map swaps text and background (a dark theme)."""
    presentation = Presentation()
    master = presentation.slide_master
    mapping = master._element.find("{http://schemas.openxmlformats.org/presentationml/2006/main}clrMap")
    mapping.set("bg1", "dk1")
    mapping.set("tx1", "lt1")
    slide = presentation.slides.add_slide(presentation.slide_layouts[TITLE_LAYOUT])
    slide.shapes.title.text = "Light on dark"
    slide.background.fill.solid()
    slide.background.fill.fore_color.theme_color = MSO_THEME_COLOR.BACKGROUND_1
    slide.placeholders[1].text_frame.text = "Subtitle"
    slide.placeholders[1].text_frame.paragraphs[0].runs[0].font.color.rgb = RGBColor(0xFF, 0xC0, 0x00)
    return saved(presentation)


def test_a_dark_theme_keeps_its_background_and_light_text(import_pptx, tmp_path):
    result = import_pptx(dark_theme_deck())

    unpacked_project(result, tmp_path)
    source = (tmp_path / "main.typ").read_text()
    assert '#page(fill: rgb("#000000"))[' in source
    title = source.split("= Light on dark")[0].rsplit("#place", 1)[-1]
    assert 'fill: rgb("#ffffff")' in title and title.endswith("#align(center)[")
    assert 'fill: rgb("#ffc000")' in source.split("Subtitle")[0].rsplit("#place", 1)[-1]


@pytest.mark.parametrize("profile", ["editable", "faithful"])
def test_a_deck_without_slides_imports_as_an_empty_project_with_its_report(import_pptx, profile, tmp_path):
    data = (Path(__file__).parents[3] / "corpora" / "pptx" / "python-pptx" / "no-slides.pptx").read_bytes()

    result = import_pptx(data, profile=profile)

    bundle = unpacked_project(result, tmp_path)
    assert [item.path for item in bundle.files] == ["main.typ"]
    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    assert report["source"]["slides"] == 0 and report["slides"] == [] and report["profile"] == profile
    typst.compile(str(tmp_path / "main.typ"), root=str(tmp_path), ignore_system_fonts=True)


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_the_faithful_profile_leaves_a_gradient_to_libreoffice_instead_of_flattening_it(import_pptx, tmp_path):
    result = import_pptx(styled_deck(), profile="faithful")

    unpacked_project(result, tmp_path)
    source = (tmp_path / "main.typ").read_text()
    themed = source.split("White on accent one")[0].rsplit("#place", 2)
    assert "rect(" not in themed[-2], "the gradient stays in the slide's rendered background"
    assert 'fill: rgb("#d99694"), stroke: 3pt + rgb("#f79646")' in source, "a solid fill is still drawn by Typst"
