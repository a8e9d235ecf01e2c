"""SyncTeX parsing and lookups on a real multi-file build, checked against where the PDF itself put the text."""

import gzip
import re
import time
import zlib

import pytest

from processing.exceptions import SyncTexUnreadable
from processing.synctex import parser as synctex
from processing.synctex.parser import synctex_forward, synctex_input_paths, synctex_inverse, synctex_parse
from tests.processing.api.synctex_documents import PROJECT, built, chapter, first_lines, line_of, needs_pdflatex

PARAGRAPHS = [(path, f"Paragraph {n} of {name}") for path, name, count in
              (("main.tex", "main", 1), ("chapters/one.tex", "one", 6), ("chapters/two.tex", "two", 6))
              for n in range(1, count + 1)]  # fmt: skip


@pytest.fixture(scope="module")
def document():
    data = built()
    index = synctex_parse(data.synctex)
    return index, synctex_input_paths(index.inputs, PROJECT), first_lines(data.pdf)


def tags_of(paths: dict[int, str], file: str) -> list[int]:
    return [tag for tag, path in paths.items() if path == file]


pytestmark = needs_pdflatex


def test_the_project_files_are_named_by_their_project_paths_and_texs_own_files_not_at_all(document):
    index, paths, _ = document
    assert sorted(paths.values()) == ["chapters/one.tex", "chapters/two.tex", "main.tex"]
    assert any(name.endswith("/article.cls") for name in index.inputs.values())  # recorded, not a project file


def test_forward_of_chapters_two_line_7_lands_on_its_paragraph(document):
    index, paths, pdf = document
    assert line_of(PROJECT["chapters/two.tex"], "Paragraph 2 of two") == 6  # line 7 is its second line

    boxes = synctex_forward(index, tags_of(paths, "chapters/two.tex"), 7)

    own, following = pdf["Paragraph 2 of two"], pdf["Paragraph 3 of two"]
    assert [box.page for box in boxes] == [own.page] == [2]
    box = boxes[0]
    assert own.baseline - 12 < box.y < box.y + box.height < following.baseline - 8  # within the paragraph's band
    assert box.x == pytest.approx(own.x - 15, abs=1) and box.width == pytest.approx(343.7, abs=0.5)  # \textwidth
    centre = synctex_inverse(index, box.page, box.x + box.width / 2, box.y + box.height / 2, paths)
    assert (centre.file, centre.line) == ("chapters/two.tex", 7)


@pytest.mark.parametrize(("file", "start"), PARAGRAPHS)
def test_forward_of_every_paragraphs_first_line_holds_its_first_typeset_line(document, file, start):
    index, paths, pdf = document
    line = line_of(PROJECT[file], start)

    box = synctex_forward(index, tags_of(paths, file), line)[0]

    typeset = pdf[start]
    assert box.page == typeset.page
    assert box.y < typeset.baseline <= box.y + box.height
    assert box.x - 0.01 <= typeset.x < box.x + box.width  # the PDF rounds to 1/1000 pt


@pytest.mark.parametrize(("file", "start"), PARAGRAPHS)
def test_a_click_on_a_paragraphs_first_word_opens_its_file_at_that_line(document, file, start):
    index, paths, pdf = document
    typeset = pdf[start]

    found = synctex_inverse(index, typeset.page, typeset.x + 3, typeset.baseline - 3, paths)

    assert (found.file, found.line) == (file, line_of(PROJECT[file], start))


def test_a_comment_or_blank_line_answers_for_the_next_line_with_material(document):
    index, paths, _ = document
    tags = tags_of(paths, "chapters/two.tex")
    assert PROJECT["chapters/two.tex"].splitlines()[4].startswith("%")  # line 5

    assert synctex_forward(index, tags, 5) == synctex_forward(index, tags, 6)
    assert synctex_forward(index, tags, 10_000) == []


def test_a_blank_line_after_a_paragraph_is_its_paragraph_not_the_page_shipped_out_meanwhile(document):
    index, paths, pdf = document
    # TeX shipped page 1 out while reading two.tex line 4 (the blank line closing its first paragraph on
    # page 2): page 1's headline and footline carry that line too
    boxes = synctex_forward(index, tags_of(paths, "chapters/two.tex"), 4)

    assert [box.page for box in boxes] == [2]
    assert boxes[0].y < pdf["Paragraph 1 of two"].baseline < boxes[0].y + boxes[0].height


def test_clicks_beside_the_text_or_on_other_pages_find_the_nearest_line_or_nothing(document):
    index, paths, pdf = document
    beside = pdf["Paragraph 3 of two"]
    found = synctex_inverse(index, beside.page, 560, beside.baseline - 3, paths)  # in the right margin
    assert found.file == "chapters/two.tex" and found.line in (9, 10)

    assert synctex_inverse(index, 3, 200, 200, paths) is None  # the PDF has two pages
    assert synctex_inverse(index, 1, 200, 200, {}) is None  # no input is a file of the build


FILES = ["main.tex", "chapters/one.tex", "chapters/two.tex", "chapters/three.tex", "article.cls", "outside.tex"]
TEX_LIVE_CLASS = "/usr/share/texlive/texmf-dist/tex/latex/base/article.cls"


def test_absolute_inputs_are_matched_under_whatever_directory_the_build_ran_in():
    inputs = {
        1: "/srv/builds/8f3k/./main.tex",
        2: TEX_LIVE_CLASS,
        3: "/srv/builds/8f3k/./chapters/one.tex",
        4: "/srv/builds/8f3k/chapters/three",  # as \input{chapters/three} may be recorded
        5: "/elsewhere/chapters/two.tex",  # not under the build's directory
        6: "/srv/builds/8f3k/../outside.tex",
    }

    paths = synctex_input_paths(inputs, FILES)

    assert paths == {1: "main.tex", 3: "chapters/one.tex", 4: "chapters/three.tex"}


def test_relative_inputs_are_matched_as_they_are_and_absolute_ones_then_are_texs_own():
    inputs = {1: "main.tex", 2: TEX_LIVE_CLASS, 3: "./chapters/one.tex", 4: "chapters/two", 5: "../outside.tex"}

    paths = synctex_input_paths(inputs, FILES)

    assert paths == {1: "main.tex", 3: "chapters/one.tex", 4: "chapters/two.tex"}


def test_paths_rewritten_relative_to_the_build_give_the_same_answers(document):
    index, paths, _ = document
    text = gzip.decompress(built().synctex)
    relative = re.sub(rb"(?m)^Input:(\d+):/tmp/[^/]+/\./", rb"Input:\1:", text)
    assert relative != text and b"Input:5:chapters/one.tex\n" in relative
    other = synctex_parse(gzip.compress(relative))
    other_paths = synctex_input_paths(other.inputs, PROJECT)

    for line in (1, 6, 7, 13):
        assert synctex_forward(other, tags_of(other_paths, "chapters/two.tex"), line) == synctex_forward(
            index, tags_of(paths, "chapters/two.tex"), line
        )


def synthetic(content: str, *, magnification: int = 1000, unit: int = 1) -> bytes:
    preamble = f"SyncTeX Version:1\nInput:1:./a.tex\nOutput:pdf\nMagnification:{magnification}\nUnit:{unit}\n"
    return gzip.compress(f"{preamble}X Offset:0\nY Offset:0\nContent:\n{content}Postamble:\nCount:9\n".encode())


# One page: a vbox holding an hbox 1 in from the left, baseline 2 in down, 100 bp wide, 10 pt high and 2 pt
# deep, with a kern and a boundary on compressed points ("=": the v of the last full point)
PAGE = "\n".join(
    [
        "!1",
        "{1",
        "[1,1:0,0:0,0,0",
        "(1,3:4736286,9472573:6578176,655360,131072",
        "k1,3:5000000,=:10000",
        "x1,4:6000000,=",
        ")",
        "]",
        "}1",
        "",
    ]
)


def test_positions_are_pdf_points_from_the_top_left_scaled_by_unit_and_magnification():
    box = synctex_forward(synctex_parse(synthetic(PAGE)), [1], 3)[0]
    # 1 in = 72.27 pt = 4736286 sp = 72 bp; the box's top is its baseline less its height
    assert (box.page, box.x, box.y, box.width, box.height) == pytest.approx(
        (1, 72, 144 - 720 / 72.27, 100, 12 / 1.00375)
    )

    doubled = synctex_forward(synctex_parse(synthetic(PAGE, magnification=2000)), [1], 3)[0]
    assert (doubled.x, doubled.width) == pytest.approx((144, 200))
    old_unit = synctex_parse(synthetic(PAGE.replace("4736286,", "578,", 1), unit=8192))
    assert synctex_forward(old_unit, [1], 3)[0].x == pytest.approx(72, abs=0.05)  # 578 × 8192 sp ≈ 1 in


def test_a_compressed_point_repeats_the_last_full_v():
    index = synctex_parse(synthetic(PAGE))
    assert synctex_inverse(index, 1, 75, 140, {1: "a.tex"}).line == 3  # the kern on "=", inside the box
    assert synctex_forward(index, [1], 4)[0].page == 1  # the boundary on "=" lies in the same box


def _gzipped(data: bytes) -> bytes:
    """Gzip without a timestamp: the same bytes, so the same test ids, in every process (pytest-xdist)."""
    return gzip.compress(data, mtime=0)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"plain text, not SyncTeX",
        _gzipped(b"%PDF-1.5\n"),
        _gzipped(b"SyncTeX Version:1\nContent:\n{1\n(1,x:0,0:0,0,0\n)\n}1\n"),  # not a number
        _gzipped(b"SyncTeX Version:1\nContent:\n{1\n)\n}1\n"),  # closes a box never opened
        _gzipped(b"SyncTeX Version:1\nContent:\n{1\n[1,1:0,0:0,0,0\n)\n}1\n"),  # a vbox closed as an hbox
        _gzipped(b"SyncTeX Version:1\nContent:\n{1\n{2\n}2\n}1\n"),  # a sheet in a sheet
        _gzipped(b"SyncTeX Version:1\nContent:\n{1\nk1,1:0\n}1\n"),  # a point without its v
        _gzipped(b"SyncTeX Version:1\nUnit:0\n"),
        _gzipped(b"SyncTeX Version:1\nContent:\n{1\n(1,1:9" + b"9" * 30 + b",0:0,0,0\n)\n}1\n"),  # overflows
        _gzipped(b"SyncTeX Version:1\n" + b"!" * (synctex.RECORD_BYTES_MAX + 1)),
        _gzipped(b"SyncTeX Version:1\n")[:-6],  # truncated
        _gzipped(b"SyncTeX Version:1\n") + b"trailing bytes",
    ],
)
def test_malformed_data_is_refused_cleanly(data):
    with pytest.raises(SyncTexUnreadable):
        synctex_parse(data)


def test_more_than_256_mib_uncompressed_is_refused_without_holding_it():
    inflater = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    record = b"!" + b"0" * 60_000 + b"\n"  # an offset record: read, never kept
    chunk = b"SyncTeX Version:1\n" + record * (synctex.MiB // len(record))
    bomb = b"".join(inflater.compress(chunk) for _ in range(270)) + inflater.flush()  # 262 MiB
    assert len(bomb) < 2 * synctex.MiB

    with pytest.raises(SyncTexUnreadable, match="larger than 256 MiB"):
        synctex_parse(bomb)


def test_a_bomb_of_empty_lines_stops_at_the_record_bound(monkeypatch):
    monkeypatch.setattr(synctex, "RECORDS_MAX", 100_000)
    with pytest.raises(SyncTexUnreadable, match="more than 100000 records"):
        synctex_parse(gzip.compress(b"SyncTeX Version:1\n" + b"\n" * 200_000))


@pytest.mark.slow
def test_a_book_of_over_a_hundred_pages_parses_in_a_fraction_of_a_second_per_hundred_pages():
    chapters = {f"chapters/c{number:02d}.tex": chapter(f"c{number:02d}", 40) for number in range(21)}
    main = "\\documentclass{article}\n\\begin{document}\n"
    main += "".join(f"\\input{{{path[:-4]}}}\n" for path in chapters) + "\\end{document}\n"
    book = built((("main.tex", main), *chapters.items()))
    pdf = first_lines(book.pdf, only_last_page=True)  # pypdf reads text slowly

    started = time.perf_counter()
    index = synctex_parse(book.synctex)
    seconds = time.perf_counter() - started

    pages = max(index.sheets)
    assert pages > 100 and seconds < 5, (pages, seconds)
    paths = synctex_input_paths(index.inputs, ["main.tex", *chapters])
    last = "chapters/c20.tex"
    box = synctex_forward(index, tags_of(paths, last), line_of(chapters[last], "Paragraph 40 of c20"))[0]
    assert box.page == pdf["Paragraph 40 of c20"].page == pages
    found = synctex_inverse(
        index, box.page, pdf["Paragraph 40 of c20"].x + 3, pdf["Paragraph 40 of c20"].baseline - 3, paths
    )
    assert (found.file, found.line) == (last, line_of(chapters[last], "Paragraph 40 of c20"))
