"""LaTeX builds deliver SyncTeX data that names project files by their project path, the same bytes every time."""

import gzip
import io
import shutil
import subprocess

import pytest

from quire_worker.processors.latex import compile_pdf, synctex
from quire_worker.processors.latex.synctex import SynctexUnusable, input_records, rewrite_synctex
from tests.worker.bundles import article

MULTI_FILE = {
    "main.tex": article(r"""Words of the main file.
\input{chapters/one}
\include{chapters/two}"""),
    "chapters/one.tex": "Words from the first chapter.\n",
    "chapters/two.tex": "Words from the second chapter.\n",
}
SOURCES = "/srv/work-1234/src"
WORK_ROOTS = (("/srv/work-1234", SOURCES),)


def output_of(result, role):
    return next(output for output in result.outputs if output.role == role)


def synctex_of(build) -> tuple[bytes, bytes]:
    result = build()
    return output_of(result, "synctex").path.read_bytes(), output_of(result, "pdf").path.read_bytes()


def rewritten(text: bytes) -> bytes:
    target = io.BytesIO()
    rewrite_synctex(io.BytesIO(gzip.compress(text)), target, relative_to=WORK_ROOTS)
    return gzip.decompress(target.getvalue())


def test_a_multi_file_build_names_its_project_files_by_their_project_path(bundle, build):
    bundle(MULTI_FILE)

    data, _ = synctex_of(build)

    names = set(input_records(data).values())
    assert {"main.tex", "chapters/one.tex", "chapters/two.tex"} <= names
    assert not any("work-" in name or "/src/" in name for name in names)  # nothing of the build directory
    assert all(name.startswith("/usr/share/texlive/") for name in names if name.startswith("/"))


def test_identical_input_gives_identical_synctex_and_pdf_bytes(bundle, build):
    bundle(MULTI_FILE)

    first_synctex, first_pdf = synctex_of(build)
    second_synctex, second_pdf = synctex_of(build)

    assert first_synctex == second_synctex
    assert first_pdf == second_pdf


def test_synctex_does_not_change_the_pdf(bundle, build, monkeypatch):
    bundle(MULTI_FILE)
    with_synctex = output_of(build(), "pdf").path.read_bytes()
    monkeypatch.setattr(
        compile_pdf, "LATEXMK_OPTIONS", tuple(o for o in compile_pdf.LATEXMK_OPTIONS if o != "-synctex=1")
    )

    result = build()

    assert output_of(result, "pdf").path.read_bytes() == with_synctex
    assert "synctex" not in {output.role for output in result.outputs}
    assert any("no SyncTeX data" in entry.message for entry in result.diagnostics.entries)


@pytest.mark.skipif(shutil.which("synctex") is None, reason="TeX Live's synctex tool is not installed")
def test_the_synctex_tool_maps_the_pdf_back_to_the_input_file(bundle, build, tmp_path):
    bundle(MULTI_FILE)
    result = build()
    for role in ("pdf", "synctex"):
        shutil.copy(output_of(result, role).path, tmp_path)

    shown = subprocess.run(
        ["synctex", "view", "-i", "1:0:chapters/one.tex", "-o", "main.pdf"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    assert "Page:1" in shown


def test_input_records_become_relative_and_anchors_count_the_new_lengths():
    text = (
        b"SyncTeX Version:1\n"
        b"Input:1:/srv/work-1234/src/./main.tex\n"
        b"Input:2:/usr/share/texlive/texmf-dist/tex/latex/base/article.cls\n"
        b"Content:\n!999\n{1\n[1,3:0,0:10,10,0\n]\n}1\n"
        b"Input:3:/srv/work-1234/src/./chapters/one.tex\nInput:4:/srv/work-1234/home/cache.tex\n!12\nPostamble:\n"
    )

    result = rewritten(text)

    lines = result.split(b"\n")
    assert lines[1:3] == [b"Input:1:main.tex", b"Input:2:/usr/share/texlive/texmf-dist/tex/latex/base/article.cls"]
    assert b"Input:3:chapters/one.tex" in lines and b"Input:4:../home/cache.tex" in lines
    first_anchor, second_anchor = (index for index, line in enumerate(lines) if line.startswith(b"!"))
    assert int(lines[first_anchor][1:]) == len(b"\n".join(lines[:first_anchor]) + b"\n")
    between = b"\n".join(lines[first_anchor:second_anchor]) + b"\n"
    assert int(lines[second_anchor][1:]) == len(between)


def test_the_rewritten_file_has_no_name_and_no_time_in_its_gzip_header():
    target = io.BytesIO()
    rewrite_synctex(io.BytesIO(gzip.compress(b"SyncTeX Version:1\n", mtime=12345)), target, relative_to=WORK_ROOTS)

    header = target.getvalue()[:10]

    assert header[3] & 0x08 == 0  # no FNAME
    assert header[4:8] == b"\0\0\0\0"  # MTIME 0


def test_a_file_that_is_not_synctex_data_is_refused():
    with pytest.raises(SynctexUnusable, match="not SyncTeX data"):
        rewritten(b"%PDF-1.5 something else\n")


def test_a_gzip_bomb_stops_at_the_unpacked_size_bound(monkeypatch):
    monkeypatch.setattr(synctex, "MAX_SYNCTEX_TEXT_BYTES", 1024)

    with pytest.raises(SynctexUnusable, match="unpacked"):
        rewritten(b"SyncTeX Version:1\n" + b"g1,1:1,1\n" * 1000)


def test_a_line_without_end_is_refused():
    with pytest.raises(SynctexUnusable, match="longer than"):
        rewritten(b"SyncTeX Version:1\n" + b"x" * (synctex.MAX_LINE_BYTES + 10))
