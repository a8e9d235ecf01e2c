"""The paper `make bench-author` rebuilds, and the warm-start tests build warm against clean: 15 sections that
cross-reference each other, TikZ figures, a biblatex bibliography run through Biber, hyperref and a table of
contents — the passes a real paper needs.

``author_paper(word=…, label=…, cite=…, title=…)`` varies exactly one thing each: a word of the prose (no label
or page moves), the name of a label (every reference to it changes), a citation (the bibliography changes) and a
section title (the table of contents changes).
"""

SECTIONS = 15
BIBLIOGRAPHY_ENTRIES = 8


def _paragraph(section: int, word: str, label: str, cite: str) -> str:
    target = section % SECTIONS + 1
    reference = label if target == 1 else f"sec:{target}"
    citation = cite if section == 2 else f"key{section % BIBLIOGRAPHY_ENTRIES}"
    sentence = (
        f"Quire keeps every project in a {word} snapshot, builds it in a sandbox of its own and publishes the "
        f"result only once Core has checked it; see Section~\\ref{{{reference}}} on "
        f"page~\\pageref{{{reference}}} and \\cite{{{citation}}}. "
    )
    return sentence * 5


def author_paper(*, word: str = "frozen", label: str = "sec:1", cite: str = "key2", title: str = "Introduction") -> str:
    parts = [
        r"""\documentclass[11pt]{article}
\usepackage{tikz}
\usepackage[backend=biber]{biblatex}
\addbibresource{refs.bib}
\usepackage{hyperref}
\title{Durable document processing}
\author{Quire}
\begin{document}
\maketitle
\tableofcontents
"""
    ]
    for section in range(1, SECTIONS + 1):
        heading = title if section == 1 else f"Section {section}"
        name = label if section == 1 else f"sec:{section}"
        parts.append(f"\\section{{{heading}}}\\label{{{name}}}\n")
        parts.append(
            _paragraph(section, word, label, cite) + "\n\n" + _paragraph(section + 7, word, label, cite) + "\n"
        )
        if section % 3 == 0:
            parts.append(
                "\\begin{figure}[h]\\centering\\begin{tikzpicture}"
                f"\\draw (0,0) circle (1); \\draw (0,0) -- ({section * 20}:1); \\fill (0,0) circle (0.05);"
                f"\\end{{tikzpicture}}\\caption{{Figure of section {section}}}\\label{{fig:{section}}}\\end{{figure}}\n"
            )
    parts.append("\\printbibliography\n\\end{document}\n")
    return "".join(parts)


def author_bibliography() -> str:
    return "".join(
        f"@article{{key{n}, author = {{Author {n} and Second {n}}}, title = {{On durable processing, part {n}}}, "
        f"journal = {{Journal of Documents}}, year = {{20{n + 10:02d}}}}}\n"
        for n in range(BIBLIOGRAPHY_ENTRIES)
    )


def author_project(**varied: str) -> dict[str, str]:
    """The paper's files, as a project holds them."""
    return {"main.tex": author_paper(**varied), "refs.bib": author_bibliography()}
