"""The exported deck's text is text: every word in a text box at its place, with its font (mapped to one
PowerPoint has), size, weight, style, colour and link; lists stay lists; formulas stay in the picture."""

import json
import re
import shutil
import subprocess
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pptx import Presentation
from pptx.enum.text import PP_ALIGN

from tests.worker.conftest import typst_exported
from tests.worker.processors.typst.test_export_pptx import outputs_by_role

SLIDES = '#set page(paper: "presentation-16-9")\n#set text(size: 24pt)\n'
STYLED = {
    "main.typ": SLIDES + "= Styled slide\n"
    'Plain, *bold*, _italic_, #text(fill: rgb("#c0504d"))[red] and #link("https://example.org/a")[a link].\n\n'
    "- first item\n- second item\n  - nested item\n+ one\n+ two\n\n"
    "The formula $E = m c^2$ stays drawn, then text goes on.\n\n#align(center)[A centred closing line]\n\n"
    "#align(right)[Signed, the authors]\n"
}
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=9)


def exported(export, files):
    result = export(files)
    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    return Presentation(outputs_by_role(result)["pptx"].path), report


def runs_of(presentation):
    for slide in presentation.slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                for paragraph in shape.text_frame.paragraphs:
                    for run in paragraph.runs:
                        yield shape, paragraph, run


@pytest.fixture(scope="module")
def styled(tmp_path_factory):
    root = tmp_path_factory.mktemp("styled")
    return exported(lambda files: typst_exported(files, root), STYLED)


def run_with(presentation, text: str):
    return next(run for _, _, run in runs_of(presentation) if run.text.strip() == text)


def test_runs_keep_weight_style_colour_size_and_links(styled):
    presentation, _ = styled

    assert run_with(presentation, "bold").font.bold and run_with(presentation, "italic").font.italic
    assert str(run_with(presentation, "red").font.color.rgb) == "C0504D"
    assert run_with(presentation, "a link").hyperlink.address == "https://example.org/a"
    assert run_with(presentation, "bold").font.size.pt == 24


def test_fonts_are_mapped_to_ones_powerpoint_has_and_the_report_says_how(styled):
    presentation, report = styled

    assert {run.font.name for _, _, run in runs_of(presentation)} == {"Cambria"}
    assert report["font_mapping"] == [{"typst": "Libertinus Serif", "powerpoint": "Cambria"}]


def test_lists_stay_lists(styled):
    presentation, report = styled

    items = {}
    for _, paragraph, run in runs_of(presentation):
        properties = paragraph._p.pPr
        if properties is not None and len(properties):
            items[run.text] = properties[0].tag.rsplit("}", 1)[-1], dict(properties[0].attrib)
    assert items["first item"] == ("buChar", {"char": "•"})
    assert items["nested item"][0] == "buChar"
    assert items["two"] == ("buAutoNum", {"type": "arabicPeriod", "startAt": "2"})
    assert report["slides"][0]["list_items"] == 5


def test_a_formula_stays_in_the_picture_and_the_text_after_it_keeps_its_place(styled):
    presentation, report = styled

    texts = [shape.text_frame.text for slide in presentation.slides for shape in slide.shapes if shape.has_text_frame]
    assert "The formula" in texts and "stays drawn, then text goes on." in texts
    assert not any("=" in text for text in texts)
    formula = next(shape for shape in presentation.slides[0].shapes if shape.name == "Formula 1")
    assert formula._element.nvPicPr.cNvPr.get("descr") == "E = m c^(2)", "its source is its alt text"
    assert report["slides"][0]["formulas"] == ["E = m c^(2)"]
    before, after = (boxes_by_text(presentation)[text] for text in ("The formula", "stays drawn, then text goes on."))
    # The cut is generous around the formula (an exponent can stand out of its measured box): a few points.
    assert before.left < formula.left < after.left and formula.left + formula.width <= after.left + 8 * 12700
    assert abs((formula.top + formula.height / 2) - (before.top + before.height / 2)) < 10 * 12700, "on the line"


def boxes_by_text(presentation) -> dict:
    shapes = [shape for slide in presentation.slides for shape in slide.shapes]
    return {shape.text_frame.text: shape for shape in shapes if shape.has_text_frame}


def test_a_centred_line_is_a_centred_paragraph_about_the_same_middle(styled):
    presentation, _ = styled

    box = boxes_by_text(presentation)["A centred closing line"]
    assert box.text_frame.paragraphs[0].alignment == PP_ALIGN.CENTER
    assert abs(box.left + box.width / 2 - presentation.slide_width / 2) < 12700, "its middle is the page's"
    assert box.text_frame.paragraphs[0].runs[0].font.bold is False


def test_a_line_at_the_right_margin_is_a_right_aligned_paragraph_ending_there(styled):
    presentation, _ = styled

    box, item = (boxes_by_text(presentation)[text] for text in ("Signed, the authors", "first item"))
    assert box.text_frame.paragraphs[0].alignment == PP_ALIGN.RIGHT
    assert abs(box.left + box.width - (presentation.slide_width - item.left)) < 12700, "it ends at the margin"


def test_the_text_boxes_stand_where_typst_put_the_lines(styled):
    presentation, _ = styled

    boxes = boxes_by_text(presentation)
    heading, item, nested = boxes["Styled slide"], boxes["first item"], boxes["nested item"]
    assert heading.left == item.left, "both start at the page's margin"
    assert nested.left > item.left, "a nested item is indented"
    assert heading.top < item.top < nested.top


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    paragraphs=st.lists(st.lists(WORD, min_size=1, max_size=25), min_size=1, max_size=6),
    items=st.lists(st.lists(WORD, min_size=1, max_size=6), max_size=5),
    bold=st.booleans(),
)
def test_every_word_of_the_source_is_in_a_slide_text_frame(export_typst, paragraphs, items, bold):
    text = "\n\n".join(" ".join(words) for words in paragraphs)
    body = ("*" + text.replace("\n\n", "*\n\n*") + "*") if bold else text
    listed = "".join(f"- {' '.join(words)}\n" for words in items)
    source = SLIDES + "#set text(hyphenate: false)\n" + body + "\n\n" + listed

    presentation, report = exported(export_typst, {"main.typ": source})

    expected = sorted(word for words in (*paragraphs, *items) for word in words)
    found = sorted(
        word for slide in presentation.slides for shape in slide.shapes if shape.has_text_frame
        for word in shape.text_frame.text.split()
    )  # fmt: skip
    assert found == expected
    assert report["editable_words"] == len(expected)


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice is not installed")
def test_a_paper_exported_to_pptx_opens_in_impress_with_its_text_editable(export_typst, tmp_path):
    paper = (
        '#set document(title: "Demo paper")\n#set page(paper: "presentation-16-9")\n#set heading(numbering: "1.")\n'
        "= Introduction <intro>\nQuire builds papers and slides. See @method.\n\n"
        "= Method <method>\n- capture the project\n- build it in a sandbox\n\n$ sum_(k=1)^n k = n(n+1)/2 $\n"
    )
    result = export_typst({"main.typ": paper})
    pptx = outputs_by_role(result)["pptx"].path
    assert Presentation(pptx).core_properties.title == "Demo paper", "the deck has the document's title"

    converted = subprocess.run(
        ["soffice", "--headless", f"-env:UserInstallation=file://{tmp_path}/profile", "--convert-to", "odp",
         "--outdir", str(tmp_path), str(pptx)],
        capture_output=True, timeout=120, check=False,
    )  # fmt: skip

    assert converted.returncode == 0, converted.stderr
    with zipfile.ZipFile(tmp_path / f"{pptx.stem}.odp") as package:
        content = package.read("content.xml").decode()
    # Impress holds a PowerPoint text box as a custom shape with its paragraphs (a picture is a draw:image).
    shapes = re.findall(r"<draw:custom-shape.*?</draw:custom-shape>", content, flags=re.S)
    paragraphs = [" ".join(re.sub(r"<[^>]+>", "", shape).split()) for shape in shapes]
    for words in ("Introduction", "Quire builds papers and slides. See Section 2.", "capture the project", "Method"):
        assert words in paragraphs, f"{words!r} is not editable text in Impress"
