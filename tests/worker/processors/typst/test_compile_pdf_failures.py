"""Every way a Typst build fails ends in one classified ProcessorFailure, in the real sandbox, with file:line."""

import time

import pytest

from quire_worker.contracts import FailureClass, Limits, ProcessorFailure
from quire_worker.processors.typst.compile_pdf import TypstPdfProcessor
from tests.worker.processors.typst.test_compile_pdf import build_typst


def failure_of(tmp_path, files: dict[str, str | bytes], **options) -> ProcessorFailure:
    with pytest.raises(ProcessorFailure) as caught:
        build_typst(tmp_path, files, **options)
    return caught.value


def test_a_compile_error_is_rejected_with_its_file_and_line(tmp_path):
    files = {
        "main.typ": '= Talk\n#include "chapters/intro.typ"\n',
        "chapters/intro.typ": "First line\nSecond line\n#let broken = (1, 2\nFourth line\n",
    }

    failure = failure_of(tmp_path, files)

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "compile_error")
    first = failure.diagnostics.entries[0]
    assert (first.file, first.line, first.severity) == ("chapters/intro.typ", 3, "error")
    assert "chapters/intro.typ:3: " in failure.message
    assert f"chapters/intro.typ:3: error: {first.message}" in failure.diagnostics.log


def test_an_unknown_function_is_rejected_where_it_is_called(tmp_path):
    failure = failure_of(tmp_path, {"main.typ": "Hello\n\n#undefined-function()\n"})

    assert failure.failure_class == FailureClass.PROCESSOR_REJECTED
    assert (failure.diagnostics.entries[0].file, failure.diagnostics.entries[0].line) == ("main.typ", 3)
    assert "unknown variable: undefined-function" in failure.message


def test_a_registry_package_import_is_an_unsupported_dependency_naming_it(tmp_path):
    files = {
        "main.typ": '= Results\n#include "chapters/figures.typ"\n',
        "chapters/figures.typ": 'Figures follow.\n#import "@preview/cetz:0.3.0": canvas\n#canvas({})\n',
    }

    failure = failure_of(tmp_path, files)

    assert (failure.failure_class, failure.code) == (FailureClass.UNSUPPORTED_DEPENDENCY, "registry_package")
    assert "@preview/cetz:0.3.0" in failure.message
    [entry] = failure.diagnostics.entries
    assert (entry.file, entry.line) == ("chapters/figures.typ", 2)


def test_a_package_import_hidden_from_the_scan_meets_a_compiler_without_network(tmp_path):
    files = {"main.typ": '#let namespace = "@pre" + "view"\n#import namespace + "/tablex:0.0.8": tablex\n'}

    failure = failure_of(tmp_path, files)

    assert failure.failure_class == FailureClass.UNSUPPORTED_DEPENDENCY
    assert "@preview/tablex:0.0.8" in failure.message
    assert (failure.diagnostics.entries[0].file, failure.diagnostics.entries[0].line) == ("main.typ", 2)


@pytest.mark.parametrize(
    ("path", "says"),
    [
        pytest.param("../../../../../etc/passwd", "would escape the project root", id="relative"),
        # Typst reads absolute paths from the project root, never the host's
        pytest.param("/etc/passwd", "file not found", id="absolute"),
    ],
)
def test_a_file_read_outside_the_project_fails(tmp_path, path, says):
    failure = failure_of(tmp_path, {"main.typ": f'Secrets:\n#read("{path}")\n'})

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "compile_error")
    assert (failure.diagnostics.entries[0].file, failure.diagnostics.entries[0].line) == ("main.typ", 2)
    assert says in failure.message
    assert "root:" not in failure.diagnostics.log  # nothing of the host's /etc/passwd


def test_a_missing_file_is_named_by_its_project_path_never_the_work_directory(tmp_path):
    failure = failure_of(tmp_path, {"main.typ": '= Title\n#include "chapters/missing.typ"\n'})

    assert (failure.failure_class, failure.code) == (FailureClass.PROCESSOR_REJECTED, "compile_error")
    shown = [failure.message, failure.diagnostics.log, *(entry.message for entry in failure.diagnostics.entries)]
    assert "chapters/missing.typ" in failure.message
    assert not [text for text in shown if str(tmp_path) in text or "/files/" in text], shown


def test_an_infinite_loop_is_a_resource_limit_within_the_wall_limit(tmp_path):
    endless = "#let n = 0\n#for i in range(100000) { for j in range(100000) { n += 1 } }\n"
    limits = Limits(wall_seconds=5, cpu_seconds=60)
    started = time.monotonic()

    failure = failure_of(tmp_path, {"main.typ": endless}, limits=limits)

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "wall_time_exceeded")
    assert time.monotonic() - started < limits.wall_seconds + 5


def test_a_cpu_bound_loop_stops_at_the_cpu_limit(tmp_path):
    endless = "#let n = 0\n#for i in range(100000) { for j in range(100000) { n += 1 } }\n"

    failure = failure_of(tmp_path, {"main.typ": endless}, limits=Limits(wall_seconds=30, cpu_seconds=2))

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "cpu_time_exceeded")


@pytest.mark.parametrize(
    ("source", "guard"),
    [
        pytest.param("#let i = 0\n#while i >= 0 { i += 1 }\n", "loop seems to be infinite", id="loop"),
        pytest.param("#let f(n) = f(n + 1)\n#f(0)\n", "maximum function call depth exceeded", id="recursion"),
    ],
)
def test_a_runaway_document_stopped_by_typsts_own_guards_is_a_resource_limit(tmp_path, source, guard):
    failure = failure_of(tmp_path, {"main.typ": source})

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "evaluation_limit")
    assert f"main.typ:{failure.diagnostics.entries[0].line}: {guard}" in failure.message


def test_a_pdf_larger_than_the_output_limit_is_a_resource_limit(tmp_path):
    pages = "#for i in range(300) [Page #i with some text to fill it.\n#pagebreak()]\n"

    failure = failure_of(tmp_path, {"main.typ": pages}, limits=Limits(wall_seconds=60, output_bytes=100_000))

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "pdf_too_large")
    assert not list(tmp_path.glob("build-*/output/*.pdf"))


def test_more_pages_than_the_limit_is_a_resource_limit(tmp_path):
    three_pages = {"main.typ": "One\n#pagebreak()\nTwo\n#pagebreak()\nThree\n"}

    failure = failure_of(tmp_path, three_pages, processor=TypstPdfProcessor(max_pages=2))

    assert (failure.failure_class, failure.code) == (FailureClass.RESOURCE_LIMIT, "too_many_pages")


def test_a_latex_project_is_invalid_input(tmp_path):
    failure = failure_of(tmp_path, {"main.typ": "Hi\n"}, project_type="latex")

    assert (failure.failure_class, failure.code) == (FailureClass.INVALID_INPUT, "wrong_project_type")


def test_a_missing_entry_file_is_invalid_input(tmp_path):
    failure = failure_of(tmp_path, {"main.typ": "Hi\n"}, entry_path="thesis.typ")

    assert (failure.failure_class, failure.code) == (FailureClass.INVALID_INPUT, "entry_missing")
