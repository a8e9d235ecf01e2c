"""A generated five-slide deck imports into a Typst project that compiles and keeps its content."""

import io
import json
import shutil
import unicodedata
from pathlib import Path

import pytest
import typst
from PIL import Image
from pypdf import PdfReader

from quire_worker.contracts import ProcessorFailure
from quire_worker.processors.pptx.import_typst import PptxImportProcessor
from quire_worker.processors.workspace_bundle import read_bundle
from tests.worker.pptx_decks import five_slide_deck, picture_png

needs_libreoffice = pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")


@pytest.fixture(scope="module")
def deck():
    picture = picture_png()
    data, facts = five_slide_deck(picture)
    return data, facts, picture


def outputs_by_role(result) -> dict:
    return {output.role: output for output in result.outputs}


def unpacked_project(result, into: Path):
    bundle = read_bundle(outputs_by_role(result)["bundle"].path, max_files=100, max_expanded_bytes=64 * 1024**2)
    for item in bundle.files:
        (into / item.path).parent.mkdir(parents=True, exist_ok=True)
        (into / item.path).write_bytes(item.data)
    return bundle


def page_texts(project_dir: Path) -> list[str]:
    """Compile the project as a user would, then read each page's text back out of the PDF."""
    pdf = typst.compile(str(project_dir / "main.typ"), root=str(project_dir), ignore_system_fonts=True)
    pages = PdfReader(io.BytesIO(pdf)).pages
    return [" ".join(unicodedata.normalize("NFKC", page.extract_text()).split()) for page in pages]


def test_editable_import_compiles_with_one_page_per_slide_holding_its_text(import_pptx, deck, tmp_path):
    data, facts, _ = deck

    result = import_pptx(data, profile="editable")

    bundle = unpacked_project(result, tmp_path / "project")
    assert bundle.entry_path == "main.typ" and bundle.project_type == "typst"
    texts = page_texts(tmp_path / "project")
    assert len(texts) == len(facts) == 5
    for text, slide in zip(texts, facts, strict=True):
        for expected in (slide.title, *slide.texts):
            assert " ".join(expected.split()) in text, f"{expected!r} missing from page {text!r}"


def test_pages_have_the_decks_size_and_aspect_ratio(import_pptx, deck, tmp_path):
    result = import_pptx(deck[0])

    unpacked_project(result, tmp_path / "project")
    pdf = typst.compile(str(tmp_path / "project" / "main.typ"), ignore_system_fonts=True)
    box = PdfReader(io.BytesIO(pdf)).pages[0].mediabox
    assert (round(float(box.width)), round(float(box.height))) == (960, 540)  # 13.333 in x 7.5 in


def test_bullet_levels_become_nested_typst_lists(import_pptx, deck, tmp_path):
    result = import_pptx(deck[0])

    unpacked_project(result, tmp_path / "project")
    source = (tmp_path / "project" / "main.typ").read_text()
    # The master's body style sets 32pt for the first level and 28pt for the second: most of the text is 28pt.
    assert (
        '#set text(size: 28pt, font: "Carlito")\n- #text(size: 32pt)[Revenue up 12%]\n  - EMEA \\[best\\] region\n'
        "  - APAC\\_growth of \\$5M\n- #text(size: 32pt)[Hiring plan]\n"
    ) in source


def test_picture_asset_is_byte_identical_and_placed_where_it_was(import_pptx, deck, tmp_path):
    _, _, picture = deck

    result = import_pptx(deck[0])

    bundle = unpacked_project(result, tmp_path / "project")
    assets = [item for item in bundle.files if item.kind == "asset" and not item.path.startswith("fonts/")]
    assert [item.data for item in assets] == [picture]
    source = (tmp_path / "project" / "main.typ").read_text()
    # 4 in, 2 in → 288pt, 144pt; 4.5 in x 3 in → 324pt x 216pt
    assert f'dx: 288pt, dy: 144pt, image("{assets[0].path}", width: 324pt, height: 216pt' in source


def test_speaker_notes_are_kept_as_comments(import_pptx, deck, tmp_path):
    result = import_pptx(deck[0])

    unpacked_project(result, tmp_path / "project")
    source = (tmp_path / "project" / "main.typ").read_text()
    assert "//   Mention the <targets> // carefully\n//   then pause\n" in source
    assert "//   Everyone joined in March\n" in source


def test_report_lists_slides_and_what_was_approximated_or_dropped(import_pptx, deck):
    result = import_pptx(deck[0])

    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    assert report["source"] == {
        "filename": "deck.pptx",
        "slides": 5,
        "width_pt": 959.98,
        "height_pt": 540.0,
        "aspect_ratio": "16:9",
    }
    assert [slide["title"] for slide in report["slides"]] == [
        "Quarterly Review #3",
        "Agenda",
        "Numbers",
        "Team photo",
        "Outlook",
    ]
    assert report["summary"]["dropped"]["chart"] == 1
    assert report["summary"]["approximated"]["table"] == 1
    outlook = report["slides"][4]
    assert [item["kind"] for item in outlook["dropped"]] == ["chart"]
    assert report["slides"][3]["converted"]["pictures"] == 1 and report["slides"][1]["has_notes"]


def test_bundle_and_report_are_declared_with_their_media_types(import_pptx, deck):
    result = import_pptx(deck[0], filename="Q3 deck.pptx")

    roles = {output.role: (output.media_type, output.filename) for output in result.outputs}
    assert roles == {
        "bundle": ("application/x-tar", "Q3 deck.workspace-bundle.tar"),
        "report": ("application/json", "conversion-report.json"),
    }


def test_the_same_deck_imports_to_the_same_bundle_bytes(import_pptx, deck):
    first = outputs_by_role(import_pptx(deck[0]))["bundle"].path.read_bytes()
    second = outputs_by_role(import_pptx(deck[0]))["bundle"].path.read_bytes()

    assert first == second


@needs_libreoffice
def test_faithful_import_puts_a_libreoffice_rendering_behind_the_editable_text(import_pptx, deck, tmp_path):
    data, facts, picture = deck

    result = import_pptx(data, profile="faithful")

    bundle = unpacked_project(result, tmp_path / "project")
    texts = page_texts(tmp_path / "project")
    for text, slide in zip(texts, facts, strict=True):
        assert slide.title in text
    assert picture in [item.data for item in bundle.files]
    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    backgrounds = [slide["background"] for slide in report["slides"]]
    assert all(backgrounds) and all(f'background: image("{path}"' in _source(tmp_path) for path in backgrounds)
    assert _colours(tmp_path / "project" / backgrounds[4]) > 1, "the chart is drawn in slide 5's background"
    assert _colours(tmp_path / "project" / backgrounds[1]) == 1, "converted bullets are not painted twice"


def _source(tmp_path: Path) -> str:
    return (tmp_path / "project" / "main.typ").read_text()


def _colours(path: Path) -> int:
    with Image.open(path) as image:
        return len(image.convert("RGB").getcolors(maxcolors=1 << 20))


def test_faithful_profile_without_libreoffice_is_an_unsupported_dependency(import_pptx, deck):
    processor = PptxImportProcessor(soffice="/nonexistent/soffice")

    with pytest.raises(ProcessorFailure) as raised:
        import_pptx(deck[0], profile="faithful", processor=processor)

    assert raised.value.failure_class == "unsupported_dependency"
    assert "LibreOffice" in raised.value.message
    assert processor.unavailable_reason() is None
    assert "LibreOffice" in processor.unavailable_reason("faithful")
