"""A small multi-file LaTeX project built with ``pdflatex -synctex=1``, and where its PDF put each paragraph.

Every paragraph starts with "Paragraph <n> of <file>", so the PDF's own text positions (read with pypdf)
say independently of SyncTeX on which page and baseline the paragraph's first line was typeset.
"""

import functools
import io
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from pypdf import PdfReader

FILLER = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et "
    "dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip."
)


def chapter(name: str, paragraphs: int) -> str:
    """A section, then paragraphs of two source lines each, every other one after a comment line."""
    lines = [f"\\section{{Chapter {name}}}"]
    for number in range(1, paragraphs + 1):
        if number % 2 == 0:
            lines.append(f"% paragraph {number} comes next")
        lines += [f"Paragraph {number} of {name}. {FILLER}", FILLER, ""]
    return "\n".join(lines) + "\n"


MAIN = r"""\documentclass{article}
\begin{document}
\section{Introduction}
Paragraph 1 of main. This project is spread over three files, to see that
the build's SyncTeX data names each of them and every line in them.

\input{chapters/one}
\input{chapters/two}
\end{document}
"""
PROJECT = {"main.tex": MAIN, "chapters/one.tex": chapter("one", 6), "chapters/two.tex": chapter("two", 6)}

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None, reason="TeX Live's pdflatex is not installed")


@dataclass(frozen=True)
class Built:
    pdf: bytes
    synctex: bytes  # the .synctex.gz, naming inputs by absolute paths under a temporary directory


@functools.cache
def built(files: tuple[tuple[str, str], ...] = tuple(PROJECT.items())) -> Built:
    """Build the project once per test process (about half a second)."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        for path, text in files:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        command = ["pdflatex", "-synctex=1", "-interaction=nonstopmode", "-halt-on-error", "main.tex"]
        subprocess.run(command, cwd=root, check=True, capture_output=True, timeout=120)
        return Built(pdf=(root / "main.pdf").read_bytes(), synctex=(root / "main.synctex.gz").read_bytes())


@dataclass(frozen=True)
class TypesetLine:
    page: int
    x: float  # where the line's text starts, PDF points from the page's left edge
    baseline: float  # PDF points from the page's top edge


def first_lines(pdf: bytes, *, only_last_page: bool = False) -> dict[str, TypesetLine]:
    """Where the PDF shows each paragraph's first typeset line, by its opening words ("Paragraph 3 of two")."""
    found: dict[str, TypesetLine] = {}
    pages = list(enumerate(PdfReader(io.BytesIO(pdf)).pages, start=1))
    for number, page in pages[-1:] if only_last_page else pages:
        height = float(page.mediabox.height)

        def visit(text, cm, tm, font, size, number=number, height=height):
            if text.startswith("Paragraph "):
                key = " ".join(text.split()[:4]).rstrip(".")
                found[key] = TypesetLine(number, tm[4] * cm[0] + cm[4], height - (tm[5] * cm[3] + cm[5]))

        page.extract_text(visitor_text=visit)
    return found


def line_of(text: str, needle: str) -> int:
    """The 1-based number of the source line starting with ``needle``."""
    return next(number for number, line in enumerate(text.splitlines(), start=1) if line.startswith(needle))
