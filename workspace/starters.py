"""Starter content for a new project: the smallest documents that compile and show the idea."""

LATEX_MAIN = r"""\documentclass[11pt]{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\title{A Quire project}
\author{Quire}
\date{}
\begin{document}
\maketitle
\section{Hello}
This document was built by Quire from a frozen snapshot of the project.
Edit \texttt{main.tex}, then choose \emph{Build PDF}.
\end{document}
"""

TYPST_MAIN = """#set page(paper: "a4")
#set text(size: 11pt)

= A Quire project

This document was built by Quire from a frozen snapshot of the project.
Edit `main.typ`, then export it.
"""

STARTERS: dict[str, dict[str, str]] = {
    "latex": {"main.tex": LATEX_MAIN},
    "typst": {"main.typ": TYPST_MAIN},
}

DEFAULT_ENTRY = {"latex": "main.tex", "typst": "main.typ"}
