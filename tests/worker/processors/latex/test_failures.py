"""Every way a LaTeX build fails ends in one classified ProcessorFailure with the log attached."""

import signal

import pytest

from quire_worker.contracts import FailureClass, Limits, ProcessorFailure
from quire_worker.processors.latex.diagnostics import MAX_ENTRIES
from quire_worker.sandbox import BwrapExecutor
from tests.worker.bundles import article
from tests.worker.conftest import WATCHED_UID
from tests.worker.outside_signals import killed_from_outside


def failure_of(build, **kwargs) -> ProcessorFailure:
    with pytest.raises(ProcessorFailure) as caught:
        build(**kwargs)
    return caught.value


def test_a_syntax_error_is_rejected_with_its_file_and_line(bundle, build):
    bundle(
        {
            "main.tex": article(r"\input{chapters/intro}"),
            "chapters/intro.tex": "First line.\nSecond line.\nThird \\undefinedmacro line.\n",
        }
    )

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "latex_error")
    first_error = failure.diagnostics.entries[0]
    assert (first_error.file, first_error.line, first_error.severity) == ("chapters/intro.tex", 3, "error")
    assert "Undefined control sequence" in first_error.message
    assert failure.message.startswith("chapters/intro.tex:3: Undefined control sequence")


def test_a_failure_carries_the_bounded_log(bundle, build):
    bundle({"main.tex": article(r"\undefinedmacro")})

    failure = failure_of(build)

    assert failure.diagnostics.log.startswith("This is pdfTeX")
    assert "./main.tex:3: Undefined control sequence." in failure.diagnostics.log


def test_a_document_full_of_errors_is_rejected_within_its_bounds(bundle, build):
    paragraphs = "\n\n".join(f"Paragraph {n} \\undefinedmacro{{}} text." for n in range(MAX_ENTRIES + 100))
    bundle({"main.tex": article(paragraphs)})

    failure = failure_of(build, limits=Limits(wall_seconds=60, log_bytes=16 * 1024))

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "latex_error")
    assert failure.message.startswith("main.tex:3: Undefined control sequence")
    assert failure.message.endswith(f"(and at least {MAX_ENTRIES - 1} more errors)")
    assert len(failure.diagnostics.entries) == MAX_ENTRIES
    assert {entry.severity for entry in failure.diagnostics.entries} == {"error"}
    assert len(failure.diagnostics.log.encode()) <= 16 * 1024


def test_a_missing_package_is_an_unsupported_dependency_naming_it(bundle, build):
    bundle({"main.tex": article("Hello.", preamble="\\usepackage{quirenonexistentpackage}\n")})

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.UNSUPPORTED_DEPENDENCY, "missing_package")
    assert "quirenonexistentpackage.sty" in failure.message


def test_a_missing_font_is_an_unsupported_dependency_naming_it(bundle, build):
    bundle(
        {"main.tex": article("Hello.", preamble="\\usepackage{fontspec}\n\\setmainfont{Quire Missing Sans}\n")},
        compiler="xelatex",
    )

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.UNSUPPORTED_DEPENDENCY, "missing_font")
    assert "Quire Missing Sans" in failure.message


def test_a_missing_project_file_is_rejected_not_a_missing_dependency(bundle, build):
    bundle({"main.tex": article(r"\input{chapters/absent}")})

    failure = failure_of(build)

    assert failure.failure_class == FailureClass.PROCESSOR_REJECTED
    assert "chapters/absent.tex" in failure.message


def test_a_document_without_pages_is_rejected_for_producing_no_pdf(bundle, build):
    bundle({"main.tex": article("")})

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "no_pdf")


def test_an_entry_file_missing_from_the_bundle_is_invalid_input(bundle, build):
    bundle({"main.tex": article("Hello.")}, entry_path="thesis.tex")

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.INVALID_INPUT, "entry_missing")


def test_a_listed_file_absent_from_the_files_tree_is_invalid_input(bundle, build, job_dir):
    bundle({"main.tex": article("Hello.")})
    (job_dir / "input" / "files" / "main.tex").unlink()

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.INVALID_INPUT, "bundle_file_missing")


@pytest.mark.parametrize("entry_path", ["-pdf.tex", '"; touch x; ".tex', "../main.tex", ".hidden.tex"])
def test_an_entry_path_that_is_not_a_plain_file_name_is_invalid_input(bundle, build, entry_path):
    bundle({"main.tex": article("Hello.")}, entry_path=entry_path)

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.INVALID_INPUT, "unsafe_entry_path")


def test_an_unknown_compiler_is_invalid_input(bundle, build):
    bundle({"main.tex": article("Hello.")}, compiler="tectonic")

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.INVALID_INPUT, "unsupported_compiler")


def test_a_sandbox_that_cannot_start_is_transient_infrastructure(bundle, build, watched_executor):
    bundle({"main.tex": article("Hello.")})

    with watched_executor.uid_pool.lease():  # another job holds the only sandbox uid
        failure = failure_of(build, executor=BwrapExecutor(uids=watched_executor.uid_pool.uids))

    assert (failure.failure_class, failure.code) == (
        FailureClass.TRANSIENT_INFRASTRUCTURE,
        "sandbox_unavailable",
    )


@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGTERM])
def test_a_compiler_killed_from_outside_is_retried_not_the_documents_fault(
    bundle, build, watched_executor, signal_number
):
    bundle({"main.tex": article(r"\def\spin{\spin}\spin")})

    with killed_from_outside(WATCHED_UID, once_running="pdflatex", kill="latexmk", signal_number=signal_number):
        failure = failure_of(build, executor=watched_executor, limits=Limits(wall_seconds=90, cpu_seconds=90))

    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT_INFRASTRUCTURE, "compiler_killed")
    assert signal.Signals(signal_number).name in failure.message


@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGTERM])
@pytest.mark.parametrize("kill", ["pdflatex", ("sh", "pdflatex")], ids=["engine", "engine-and-its-shell"])
def test_an_engine_killed_from_outside_under_latexmk_is_retried_not_the_documents_fault(
    bundle, build, watched_executor, signal_number, kill
):
    """latexmk survives its engine's death (and the shell's it ran it through, as ``pkill -f pdflatex`` kills
    both): still not the document's fault."""
    bundle({"main.tex": article(r"\def\spin{\spin}\spin")})

    with killed_from_outside(WATCHED_UID, once_running="pdflatex", kill=kill, signal_number=signal_number):
        failure = failure_of(build, executor=watched_executor, limits=Limits(wall_seconds=90, cpu_seconds=90))

    assert (failure.failure_class, failure.code) == (FailureClass.TRANSIENT_INFRASTRUCTURE, "compiler_killed")


def test_a_missing_font_whose_name_has_spaces_is_named_whole(bundle, build):
    bundle(
        {"main.tex": article('\\font\\quirefont="Quire Missing Serif" at 10pt \\quirefont Hello.')}, compiler="xelatex"
    )

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.UNSUPPORTED_DEPENDENCY, "missing_font")
    assert "the font Quire Missing Serif is not installed" in failure.message


def test_a_missing_font_file_with_options_is_named_by_its_file(bundle, build):
    source = '\\font\\quirefont="file:QuireNastaliq-Regular.ttf:mode=harf;shaper=ot" at 10pt \\quirefont Hello.'
    bundle({"main.tex": article(source)}, compiler="lualatex")

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.UNSUPPORTED_DEPENDENCY, "missing_font")
    assert "the font QuireNastaliq-Regular.ttf is not installed" in failure.message


def test_a_runaway_argument_is_placed_where_the_argument_began(bundle, build):
    bundle(
        {
            "main.tex": article(r"\input{chapters/one}"),
            "chapters/one.tex": "First paragraph.\n\\textbf{a bold start\n\nthat is never closed.\n",
        }
    )

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "latex_error")
    first = failure.diagnostics.entries[0]
    assert (first.file, first.line) == ("chapters/one.tex", 2)
    assert failure.message.startswith("chapters/one.tex:2: File ended while scanning use of \\textbf")


def test_a_bibliography_tool_that_failed_is_named_with_its_reason(bundle, build):
    """latexmk exits 12 after BibTeX failed, with no TeX error: the failure says BibTeX's error and that latexmk
    saw BibTeX fail, not only latexmk's exit status."""
    body = (
        "As shown~\\cite{knuth}.\n"
        "\\begin{bibsection}\\begin{biblist}\\bibselect{quire-missing-refs}\\end{biblist}\\end{bibsection}"
    )
    bundle({"main.tex": article(body, preamble="\\usepackage{amsrefs}\n")})

    failure = failure_of(build)

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "latex_error")
    assert failure.message.startswith("BibTeX: I found no \\bibdata command (while reading main.aux)")
    messages = [entry.message for entry in failure.diagnostics.entries if entry.severity == "error"]
    assert "latexmk: bibtex main: Bibtex errors: See file 'main.blg'" in messages


def test_a_failure_nothing_else_explains_quotes_latexmks_last_word():
    from types import SimpleNamespace

    from quire_worker.processors.latex.failures import _latexmk_last_word

    run = SimpleNamespace(
        stderr=b"Latexmk: applying rule 'pdflatex'...\nLatexmk: Errors, so I did not complete making targets\n",
        stdout=b"",
    )

    assert _latexmk_last_word(run) == "Errors, so I did not complete making targets"
    assert _latexmk_last_word(SimpleNamespace(stderr=b"", stdout=b"nothing of latexmk's")) == ""


def test_a_tools_signal_reported_as_latexmks_fractional_return_code_is_read():
    """Where latexmk runs the engine without a shell, it reports the wait status over 256 (SIGKILL: 9/256)."""
    from types import SimpleNamespace

    from quire_worker.processors.latex.failures import _tool_signalled

    def evidence(stdout: bytes, stderr: str = ""):
        return SimpleNamespace(run=SimpleNamespace(stdout=stdout), stderr=stderr)

    said = (
        b"Collected error summary (may duplicate other messages):\n  pdflatex: Command for 'pdflatex' gave return code "
    )
    assert _tool_signalled(evidence(said + b"0.03515625\n")) == "SIGKILL"
    assert _tool_signalled(evidence(said + b"0.05859375\n")) == "SIGTERM"
    assert _tool_signalled(evidence(said + b"1\n")) is None, "an exit status of the tool's own"
    assert _tool_signalled(evidence(b"", "Terminated\n")) == "SIGTERM"
