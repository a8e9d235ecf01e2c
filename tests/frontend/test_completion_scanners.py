"""The editor's pure readers of LaTeX, Typst and BibTeX sources (frontend/src/editor/completion/ and
spelling-exclusions.js), run in Node.js itself — the same modules the bundle carries, without a browser."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

EDITOR = Path(__file__).resolve().parents[2] / "frontend" / "src" / "editor"
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js builds the bundle; without it there is no editor")


def _call(module: str, function: str, *arguments):
    """``function(*arguments)`` of the editor's module, in Node.js; its value, through JSON."""
    script = (
        f"const module = await import({json.dumps((EDITOR / module).as_uri())});\n"
        f"const value = module[{json.dumps(function)}](...{json.dumps(arguments)});\n"
        "process.stdout.write(JSON.stringify(value));\n"
    )
    finished = subprocess.run(
        [NODE, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=30, check=True
    )
    return json.loads(finished.stdout)


BIBLIOGRAPHY = r"""
@string{tugboat = "TUGboat"}
@comment{not an entry}
@book{knuth1984,
  author    = {Donald E. Knuth},
  title     = {The {\TeX}book},
  publisher = {Addison-Wesley},
}
@Article{lamport-1986,
  title = "{LaTeX}: A Document " # {Preparation System},
  author = {Lamport, Leslie and Knuth, Donald and Mittelbach, Frank},
  journal = tugboat, year = 1986
}
@misc{broken, title = {Unclosed {brace}
"""


def test_bib_entries_give_key_author_and_title_and_skip_strings_and_comments():
    entries = _call("completion/bibtex.js", "bibEntries", BIBLIOGRAPHY)

    assert [(entry["key"], entry["author"], entry["title"], entry["line"]) for entry in entries] == [
        ("knuth1984", "Donald E. Knuth", r"The \TeXbook", 4),
        (
            "lamport-1986",
            "Lamport, Leslie and Knuth, Donald and Mittelbach, Frank",
            "LaTeX: A Document Preparation System",
            9,
        ),
        ("broken", "", "Unclosed brace", 14),
    ]


def test_many_authors_are_shortened_to_the_first_et_al():
    assert _call("completion/bibtex.js", "authorsShort", "Lamport, Leslie and Knuth, Donald and Mittelbach, Frank") == (
        "Lamport et al."
    )
    assert _call("completion/bibtex.js", "authorsShort", "Donald E. Knuth and Leslie Lamport") == "Knuth and Lamport"


def test_latex_labels_have_their_line_and_commented_ones_are_left_out():
    text = "\\section{One}\\label{sec:one}\n% \\label{sec:commented}\n50\\% done \\label{fig:two}\n"

    assert _call("completion/scan.js", "latexLabels", text) == [
        {"name": "sec:one", "line": 1},
        {"name": "fig:two", "line": 3},
    ]


def test_latex_definitions_find_commands_with_their_arguments_and_environments():
    text = (
        "\\newcommand{\\R}{\\mathbb{R}}\n\\newcommand\\norm[1]{\\lVert#1\\rVert}\n"
        "\\DeclareMathOperator{\\argmax}{arg\\,max}\n\\newenvironment{claim}{}{}\n\\newtheorem{conjecture}{Conjecture}\n"
        "% \\newcommand{\\commented}{}\n"
    )

    definitions = _call("completion/scan.js", "latexDefinitions", text)

    assert definitions == {
        "commands": [
            {"name": "R", "arguments": 0},
            {"name": "norm", "arguments": 1},
            {"name": "argmax", "arguments": 0},
        ],
        "environments": ["claim", "conjecture"],
    }


def test_typst_labels_outside_comments_and_raw_text():
    text = '= Intro <intro>\n// <commented>\nSee `<raw>` and\n#figure(image("a.png")) <fig:a>\n'

    assert _call("completion/scan.js", "typstLabels", text) == [
        {"name": "intro", "line": 1},
        {"name": "fig:a", "line": 4},
    ]


def _excluded(text: str, language: str) -> list[str]:
    return [text[start:end] for start, end in _call("spelling-exclusions.js", "spellingExclusions", text, language)]


def test_latex_commands_math_and_name_arguments_are_not_prose():
    text = (
        "Teh \\emph{wrods} cost $x^2 + y$ as \\ref{sec:intro} and \\cite[p.~3]{knuth1984}.\n"
        "% a $ in a comment\n\\begin{equation}\n  E = mc^2\n\\end{equation}\nDone \\[ a \\]"
    )

    assert _excluded(text, "latex") == [
        "\\emph",
        "$x^2 + y$",
        "\\ref{sec:intro}",
        "\\cite[p.~3]{knuth1984}",
        "\\begin{equation}\n  E = mc^2\n\\end{equation}",
        "\\[ a \\]",
    ]


def test_typst_code_math_labels_and_references_are_not_prose():
    text = 'Teh #emph[wrods] cost $x^2$ as @intro. <fig:a> `raw` #image("a.png")'

    assert _excluded(text, "typst") == ["#emph", "$x^2$", "@intro", "<fig:a>", "`raw`", '#image("a.png")']


def test_a_lone_dollar_does_not_turn_the_next_paragraph_into_math():
    text = "It costs 5$ today.\n\nThe next paragraph has $y$ in it."

    assert _excluded(text, "latex") == ["$y$"]
