"""Typst projects the export cannot turn into slides fail with the right class and a precise cause."""

import pytest

from quire_worker.contracts import ProcessorFailure
from quire_worker.processors.typst.export_pptx import TypstExportProcessor


def export_failure(export_typst, files: dict[str, str], **options) -> ProcessorFailure:
    with pytest.raises(ProcessorFailure) as raised:
        export_typst(files, **options)
    return raised.value


def test_a_registry_package_import_is_an_unsupported_dependency_naming_it(export_typst):
    files = {
        "main.typ": '= Results\n#include "chapters/figures.typ"\n',
        "chapters/figures.typ": 'Figures follow.\n#import "@preview/cetz:0.3.0": canvas\n#canvas({})\n',
    }

    failure = export_failure(export_typst, files)

    assert (failure.failure_class, failure.code) == ("unsupported_dependency", "registry_package")
    assert "@preview/cetz:0.3.0" in failure.message
    [entry] = failure.diagnostics.entries
    assert (entry.file, entry.line) == ("chapters/figures.typ", 2)


def test_a_commented_out_package_import_does_not_count(export_typst):
    files = {"main.typ": '// #import "@preview/cetz:0.3.0": canvas\nNo packages here.\n'}

    result = export_typst(files)

    assert {output.role for output in result.outputs} == {"pptx", "report"}


def test_a_package_import_hidden_from_the_scan_meets_a_compiler_without_network(export_typst):
    files = {"main.typ": '#let namespace = "@pre" + "view"\n#import namespace + "/cetz:0.3.0": canvas\n'}

    failure = export_failure(export_typst, files)

    assert failure.failure_class == "unsupported_dependency"
    assert "@preview/cetz:0.3.0" in failure.message
    [entry] = failure.diagnostics.entries
    assert (entry.file, entry.line) == ("main.typ", 2)
    assert "failed to download package" in entry.message


def test_a_syntax_error_is_rejected_with_the_file_and_line(export_typst):
    files = {
        "main.typ": '= Talk\n#include "chapters/intro.typ"\n',
        "chapters/intro.typ": "First line\nSecond line\n#let broken = (1, 2\nFourth line\n",
    }

    failure = export_failure(export_typst, files)

    assert (failure.failure_class, failure.code) == ("processor_rejected", "compile_error")
    assert failure.diagnostics.entries[0].file == "chapters/intro.typ"
    assert failure.diagnostics.entries[0].line == 3
    assert "chapters/intro.typ:3" in failure.message


def test_an_unknown_function_is_rejected_where_it_is_called(export_typst):
    failure = export_failure(export_typst, {"main.typ": "Hello\n\n#undefined-function()\n"})

    assert failure.failure_class == "processor_rejected"
    assert (failure.diagnostics.entries[0].file, failure.diagnostics.entries[0].line) == ("main.typ", 3)
    assert "unknown variable: undefined-function" in failure.diagnostics.entries[0].message


def test_more_pages_than_the_limit_is_a_resource_limit(export_typst):
    files = {"main.typ": "One\n#pagebreak()\nTwo\n#pagebreak()\nThree\n"}

    failure = export_failure(export_typst, files, processor=TypstExportProcessor(max_pages=2))

    assert (failure.failure_class, failure.code) == ("resource_limit", "too_many_pages")


def test_a_latex_project_is_invalid_input(export_typst):
    failure = export_failure(export_typst, {"main.typ": "Hi\n"}, project_type="latex")

    assert (failure.failure_class, failure.code) == ("invalid_input", "wrong_project_type")


def test_a_missing_entry_file_is_invalid_input(export_typst):
    failure = export_failure(export_typst, {"main.typ": "Hi\n"}, entry_path="slides.typ")

    assert (failure.failure_class, failure.code) == ("invalid_input", "entry_missing")
