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

# `make run`'s *Demo paper* (``manage.py seed_demo_project``): a short paper with what an author's loop meets —
# cross-references, an equation, a table, citations from a .bib file, a table of contents and links.
DEMO_PAPER_MAIN = r"""\documentclass[11pt]{article}
\usepackage[T1]{fontenc}
\usepackage{lmodern}
\usepackage{amsmath}
\usepackage{hyperref}
\title{Durable document processing}
\author{Quire}
\date{}
\begin{document}
\maketitle
\tableofcontents

\section{Introduction}\label{sec:intro}
Quire builds every project from a frozen snapshot, in a sandbox of its own, and publishes the result only
once it has been checked. Section~\ref{sec:method} says how; Table~\ref{tab:results} says how fast.
Typesetting owes its rules to \cite{knuth1984} and its macros to \cite{lamport1994}.

\section{Method}\label{sec:method}
A build is a pure function of its input. Its cost grows with the passes it needs:
\begin{equation}\label{eq:cost}
  t_{\text{build}} = t_{\text{start}} + n_{\text{passes}} \cdot t_{\text{pass}}
\end{equation}
Equation~\eqref{eq:cost} is why a build that starts warm needs one pass where a clean one needs three.

\section{Results}\label{sec:results}
\begin{table}[h]
  \centering
  \begin{tabular}{lr}
    Build & Passes \\
    \hline
    Clean & 3 \\
    Warm & 1
  \end{tabular}
  \caption{Passes per build}\label{tab:results}
\end{table}
As Section~\ref{sec:intro} promised, nothing typed is lost on the way.

\bibliographystyle{plain}
\bibliography{refs}
\end{document}
"""

DEMO_PAPER_BIBLIOGRAPHY = r"""@book{knuth1984,
  author = {Donald E. Knuth},
  title = {The {\TeX}book},
  publisher = {Addison-Wesley},
  year = {1984}
}

@book{lamport1994,
  author = {Leslie Lamport},
  title = {{\LaTeX}: A Document Preparation System},
  publisher = {Addison-Wesley},
  edition = {2},
  year = {1994}
}
"""

DEMO_PAPER = {"main.tex": DEMO_PAPER_MAIN, "refs.bib": DEMO_PAPER_BIBLIOGRAPHY}

STARTERS: dict[str, dict[str, str]] = {
    "latex": {"main.tex": LATEX_MAIN},
    "typst": {"main.typ": TYPST_MAIN},
}

DEFAULT_ENTRY = {"latex": "main.tex", "typst": "main.typ"}
