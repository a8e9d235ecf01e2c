"""Every error of a build, and its warnings and bad boxes, each with the file and line it belongs to.

The builds run real TeX Live in the bubblewrap sandbox; the parser's harder cases (parentheses
TeX did not print for a file, names with spaces, files outside the project) are checked on logs
written here, shaped like the engines' own.
"""

import re

import pytest

from quire_worker.contracts import Diagnostic, FailureClass, ProcessorFailure
from quire_worker.processors.latex.diagnostics import MAX_ENTRIES, merged, tex_log_diagnostics
from tests.worker.bundles import article

TWO_ERRORS_MAIN = article(r"""Text before the errors.
\undefinedmacro
\input{chapters/one}
\hbox to 1cm{A box far too narrow for this text}

After the box.""")
TWO_ERRORS_CHAPTER = r"""First line of the chapter.

Second \alsoundefined{} line.
\begin{figure}\rule{1cm}{30cm}\end{figure}
"""


def failure_of(build) -> ProcessorFailure:
    with pytest.raises(ProcessorFailure) as caught:
        build()
    return caught.value


def places(entries, severity: str) -> list[tuple[str | None, int | None]]:
    return [(entry.file, entry.line) for entry in entries if entry.severity == severity]


def test_a_failing_build_reports_every_error_with_its_own_file_and_line(bundle, build):
    bundle({"main.tex": TWO_ERRORS_MAIN, "chapters/one.tex": TWO_ERRORS_CHAPTER})

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "latex_error")
    entries = failure.diagnostics.entries
    assert places(entries, "error") == [("main.tex", 4), ("chapters/one.tex", 3)]
    assert all("Undefined control sequence" in entry.message for entry in entries if entry.severity == "error")
    assert failure.message.startswith("main.tex:4: Undefined control sequence")
    assert failure.message.endswith("(and 1 more error)")


def test_a_failing_build_keeps_its_warnings_and_bad_boxes_with_their_files(bundle, build):
    bundle({"main.tex": TWO_ERRORS_MAIN, "chapters/one.tex": TWO_ERRORS_CHAPTER})

    entries = failure_of(build).diagnostics.entries

    [float_warning] = [entry for entry in entries if "Float too large" in entry.message]
    assert (float_warning.file, float_warning.line, float_warning.severity) == ("chapters/one.tex", 4, "warning")
    [box] = [entry for entry in entries if entry.message.startswith("Overfull \\hbox")]
    assert (box.file, box.line, box.severity) == ("main.tex", 6, "warning")


def test_the_diagnostics_log_holds_every_error_in_file_line_form(bundle, build):
    bundle({"main.tex": TWO_ERRORS_MAIN, "chapters/one.tex": TWO_ERRORS_CHAPTER})

    log = failure_of(build).diagnostics.log

    assert re.search(r"^main\.tex:4: error: Undefined control sequence", log, re.MULTILINE)
    assert re.search(r"^chapters/one\.tex:3: error: Undefined control sequence", log, re.MULTILINE)
    assert re.search(r"^main\.tex:6: warning: Overfull \\hbox", log, re.MULTILINE)
    assert log.startswith("This is pdfTeX")  # the transcript itself comes first, whole


def test_a_failing_build_leaves_out_references_its_missing_rerun_would_resolve(bundle, build):
    main = article(r"""\section{Start}\label{sec:start}
See section~\ref{sec:start}.
\undefinedmacro""")
    bundle({"main.tex": main})

    entries = failure_of(build).diagnostics.entries

    assert not any("sec:start" in entry.message or "Rerun" in entry.message for entry in entries)
    assert any(
        entry.severity == "info" and "references and citations are checked" in entry.message for entry in entries
    )


def test_warnings_and_bad_boxes_of_an_input_file_name_that_file(bundle, build):
    chapter = r"""A reference to section~\ref{nowhere} in the chapter.

\parbox{1cm}{Incomprehensibilities characteristically}
"""
    main = article(r"""\input{chapters/one}
\hbox to 1cm{A box far too narrow for this text}""")
    bundle({"main.tex": main, "chapters/one.tex": chapter})

    entries = build().diagnostics.entries

    [reference] = [entry for entry in entries if "`nowhere'" in entry.message]
    assert (reference.file, reference.line, reference.severity) == ("chapters/one.tex", 1, "warning")
    boxes = [(entry.file, entry.line, entry.message.split(" (")[0]) for entry in entries if "box (" in entry.message]
    assert ("chapters/one.tex", 3, "Underfull \\hbox") in boxes
    assert ("main.tex", 4, "Overfull \\hbox") in boxes


def test_a_classic_error_takes_its_file_from_the_log_and_its_line_from_the_context():
    log = "\n".join(["(./main.tex", "(./chapters/one.tex", "! Something went wrong.", "l.7 \\oops", "", ")", ")"])

    [error] = tex_log_diagnostics(log, {"main.tex", "chapters/one.tex"})

    assert (error.file, error.line, error.severity) == ("chapters/one.tex", 7, "error")
    assert error.message == "Something went wrong. [l.7 \\oops]"


def test_parentheses_of_user_text_do_not_open_files():
    log = "\n".join(
        [
            "(./main.tex",
            "(./chapters/one.tex",
            "a message (with an open parenthesis",  # \typeout, on a line of its own
            "./chapters/one.tex:2: Undefined control sequence.",
            "l.2 Text (unbalanced \\oops",
            "                          ) too.",
            "",
            "Overfull \\hbox (1.0pt too wide) in paragraph at lines 3--3",
            "[]\\OT1/cmr/m/n/10 box text (unbalanced",
            "",
            ")",
            "LaTeX Warning: Reference `a' on page 1 undefined on input line 9.",
        ]
    )

    entries = tex_log_diagnostics(log, {"main.tex", "chapters/one.tex"})

    assert [(entry.file, entry.line) for entry in entries] == [
        ("chapters/one.tex", 2),
        ("chapters/one.tex", 3),
        ("main.tex", 9),
    ]


def test_project_files_with_spaces_and_absolute_build_paths_are_project_relative():
    log = "\n".join(
        [
            "(/work/job/src/./main.tex",
            "(./my chapter.tex",
            "LaTeX Warning: Citation `x' on page 1 undefined on input line 4.",
            ")",
            "LaTeX Warning: Citation `y' on page 1 undefined on input line 8.",
        ]
    )

    entries = tex_log_diagnostics(log, {"main.tex", "my chapter.tex"}, ["/work/job/src"])

    assert [(entry.file, entry.line) for entry in entries] == [("my chapter.tex", 4), ("main.tex", 8)]


def test_a_warning_of_a_package_names_the_project_file_that_loaded_it_but_no_line():
    log = "\n".join(
        [
            "(./main.tex",
            "(/usr/share/texlive/texmf-dist/tex/latex/some/some.sty",
            "Package some Warning: Something odd",
            "(some)                about this on input line 120.",
            "",
            ")",
        ]
    )

    [warning] = tex_log_diagnostics(log, {"main.tex"})

    assert (warning.file, warning.line) == ("main.tex", None)
    assert warning.message == "Package some Warning: Something odd about this on input line 120."


def test_an_error_in_a_generated_file_names_it_in_the_message():
    log = "\n".join(["(./main.tex", "(./main.toc", "./main.toc:3: Undefined control sequence.", "l.3 \\bad", "", ")"])

    [error] = tex_log_diagnostics(log, {"main.tex"})

    assert (error.file, error.line) == ("main.tex", None)
    assert "[in main.toc:3]" in error.message


def test_past_the_bound_errors_are_kept_before_warnings_and_bad_boxes():
    boxes = [Diagnostic("main.tex", n, "warning", f"Underfull \\hbox (badness 10000) at line {n}") for n in range(600)]
    errors = [Diagnostic("main.tex", 1000 + n, "error", f"error {n}") for n in range(3)]

    kept = merged(boxes, errors)

    assert len(kept) == MAX_ENTRIES
    assert [entry for entry in kept if entry.severity == "error"] == errors
