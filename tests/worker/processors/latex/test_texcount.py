"""LaTeX builds report the document's word count, counted by texcount in the sandbox."""

import json
import shutil
import subprocess
import threading

import pytest

from quire_worker.contracts import CompletedRun, Limits
from quire_worker.processors.latex.compile_pdf import LatexProcessor
from quire_worker.processors.latex.texcount import TEXCOUNT_OPTIONS, count_words
from quire_worker.processors.latex.texlive import detect_texlive
from quire_worker.processors.latex.work_area import WorkArea
from quire_worker.sandbox import BwrapExecutor

# 3 words of heading, 7 + 3 (the input file) + 4 of text, 3 of caption; not the formula, not the comment.
COUNTED_MAIN = r"""\documentclass{article}
\begin{document}
\section{Counting words here}
One two three four five six seven.
\input{chapters/more}
\begin{figure}\rule{1cm}{1cm}\caption{A short caption}\end{figure}
Math $a+b=c$ is not counted.
% a comment of six words here
\end{document}
"""
COUNTED_FILES = {"main.tex": COUNTED_MAIN, "chapters/more.tex": "Eight nine ten.\n"}
COUNTED_WORDS = 20

pytestmark = pytest.mark.skipif(shutil.which("texcount") is None, reason="texcount (texlive-extra-utils) is missing")


def output_of(result, role):
    return next((output for output in result.outputs if output.role == role), None)


def test_a_known_document_has_the_words_texcount_counts(bundle, build):
    bundle(COUNTED_FILES)

    report = json.loads(output_of(build(), "report").path.read_text())

    counted_by = f"texcount {detect_texlive().texcount_version}"
    assert report == {
        "words": COUNTED_WORDS,
        "counted_by": counted_by,
        "start": "clean",
        "runs": ["pdflatex", "pdflatex"],
    }


def test_the_count_is_what_texcount_itself_says(tmp_path):
    for name, text in COUNTED_FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)

    printed = subprocess.run(
        ["texcount", *TEXCOUNT_OPTIONS, "main.tex"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout

    assert int(printed) == COUNTED_WORDS


def test_an_entry_in_a_folder_counts_the_files_it_inputs_from_the_project_root(bundle, build):
    main = COUNTED_MAIN.replace(r"\input{chapters/more}", r"\input{chapters/more}\include{parts/extra}")
    bundle(
        {"thesis/main.tex": main, "chapters/more.tex": "Eight nine ten.\n", "parts/extra.tex": "Two more.\n"},
        entry_path="thesis/main.tex",
    )

    report = json.loads(output_of(build(), "report").path.read_text())

    assert report["words"] == COUNTED_WORDS + 2


def test_a_count_that_runs_out_of_time_costs_the_build_nothing(bundle, build):
    # TeX honours the guard; texcount does not know \ifx and inputs the file forever.
    loop = r"\ifx\again\undefined\def\again{}Once.\input{chapters/more}\fi" + "\n"
    bundle({**COUNTED_FILES, "chapters/more.tex": loop})

    result = build(limits=Limits(wall_seconds=8))

    assert output_of(result, "pdf") is not None
    assert json.loads(output_of(result, "report").path.read_text()) == {
        "start": "clean",
        "runs": ["pdflatex", "pdflatex"],
    }
    assert any(e.severity == "info" and e.message.startswith("words not counted") for e in result.diagnostics.entries)


def test_a_worker_without_texcount_reports_no_words(bundle, build, job_dir):
    import dataclasses

    bundle(COUNTED_FILES)
    texlive = dataclasses.replace(detect_texlive(), texcount_version=None, missing=("texcount",))
    processor = LatexProcessor(texlive)

    result = processor.run(
        input_dir=job_dir / "input",
        output_dir=job_dir / "output",
        request={},
        limits=Limits(wall_seconds=60),
        cancel=threading.Event(),
        executor=BwrapExecutor(),
    )

    assert json.loads(output_of(result, "report").path.read_text()) == {
        "start": "clean",
        "runs": ["pdflatex", "pdflatex"],
    }
    assert "texcount" not in processor.contract
    assert any("texcount is not installed" in entry.message for entry in result.diagnostics.entries)


class ScriptedExecutor:
    name, is_sandbox = "scripted", False

    def __init__(self, run: CompletedRun):
        self.completed = run

    def run(self, argv, **kwargs) -> CompletedRun:
        return self.completed


@pytest.mark.parametrize(
    ("stdout", "stderr", "words", "note"),
    [
        (b"20\n", b"", 20, None),
        (b"17\n (errors:1)", b"ERROR: File not found or not readable: glyphtounicode.tex\n", 17, "glyphtounicode"),
        (b"Syntax: texcount.pl [options] files\n", b"", None, "words not counted: texcount failed"),
    ],
)
def test_texcount_output_is_read_strictly(tmp_path, stdout, stderr, words, note):
    area = WorkArea(root=tmp_path, sources=tmp_path, home=tmp_path)
    executor = ScriptedExecutor(CompletedRun(returncode=0, stdout=stdout, stderr=stderr))

    count = count_words(
        entry_path="main.tex", area=area, executor=executor, limits=Limits(), seconds_left=30, cancel=threading.Event()
    )

    assert count.words == words
    assert (note is None and not count.notes) or note in count.notes[0].message
