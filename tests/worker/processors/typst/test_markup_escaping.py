"""Deck text written into Typst reads back as exactly that text, whatever characters it holds."""

import io
import json
import unicodedata

import pytest
import typst
from pypdf import PdfReader

from quire_worker.processors.pptx.slide_model import Run
from quire_worker.processors.typst.markup import escape_text, line_comment, string_literal
from quire_worker.processors.typst.slides import runs_markup

HOSTILE_TEXTS = [
    "#let x = 1 and *bold* and _under_ and $x^2$",
    "@reference <label> `raw` \\backslash ~tilde",
    "[brackets] ]unbalanced[ #[content]",
    "a // not a comment /* nor this */ end",
    "http://example.com/path and a--b---c and -? soft",
    "- not a list",
    "+ not numbered",
    "= not a heading",
    "/ not: a term",
    "1. not an enum",
    "  - indented marker",
]


def rendered_text(markup: str) -> str:
    source = f"#set page(width: 2000pt, height: auto, margin: 10pt)\n{markup}\n"
    pdf = typst.compile(source.encode(), ignore_system_fonts=True)
    text = PdfReader(io.BytesIO(pdf)).pages[0].extract_text()
    return " ".join(unicodedata.normalize("NFKC", text).split())


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_escaped_text_at_a_line_start_renders_literally(text):
    assert rendered_text(escape_text(text, at_line_start=True)) == " ".join(text.split())


def test_formatted_runs_do_not_swallow_the_text_that_follows():
    runs = (
        Run("Visit"),
        Run(" ASP", bold=True),
        Run(".NET", italic=False),
        Run(" now", italic=True),
        Run("(ok)"),
    )

    assert rendered_text(runs_markup(runs)) == "Visit ASP.NET now(ok)"


def test_a_link_keeps_its_text_and_its_exact_address():
    address = 'https://example.com/?q="x"&r=\\'
    source = f"#set page(width: 400pt, height: auto)\n{runs_markup((Run('the docs', link=address),))}\n"

    page = PdfReader(io.BytesIO(typst.compile(source.encode(), ignore_system_fonts=True))).pages[0]

    assert page.extract_text().strip() == "the docs"
    assert [annotation.get_object()["/A"]["/URI"] for annotation in page["/Annots"]] == [address]


def test_string_literals_survive_quotes_backslashes_and_newlines():
    value = 'a "quoted" \\ path\nnext\ttab'

    literal = string_literal(value)

    assert "\n" not in literal
    assert json.loads(typst.eval(b"", literal, format="json")) == value


def test_comments_cannot_be_ended_early_by_the_text_they_hold():
    lines = line_comment("first */ line\r\nsecond\u2028third\x0bfourth")

    assert lines == ["// first */ line", "// second", "// third", "// fourth"]
    source = "\n".join(lines) + "\nvisible\n"
    assert rendered_text(source) == "visible"
