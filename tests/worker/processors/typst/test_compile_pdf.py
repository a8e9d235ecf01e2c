"""TypstPdfProcessor builds real Typst projects with the real ``typst`` package inside the bubblewrap sandbox."""

import io
import json
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

import pypdf
import pytest

from quire_worker.contracts import Limits, ProcessorResult
from quire_worker.processors.typst.compile_pdf import TypstPdfProcessor
from quire_worker.processors.workspace_bundle import read_bundle
from quire_worker.sandbox import BwrapExecutor
from tests.worker.bundles import SOURCE_EPOCH, pdf_page_texts, pdf_text, sha256_of, tiny_png
from tests.worker.conftest import write_project_bundle
from tests.worker.pptx_decks import deck_with_picture, deck_with_slides, five_slide_deck, picture_png
from workspace.starters import TYPST_MAIN

LIMITS = Limits(wall_seconds=60, cpu_seconds=60)


def build_typst(
    tmp_path: Path,
    files: dict[str, str | bytes],
    *,
    entry_path: str = "main.typ",
    project_type: str = "typst",
    processor: TypstPdfProcessor | None = None,
    limits: Limits = LIMITS,
    executor=None,
) -> ProcessorResult:
    """Run the Typst build on ``files`` as a project-bundle/v1, in a fresh job directory, in bubblewrap."""
    run_dir = tmp_path / f"build-{len(list(tmp_path.glob('build-*')))}"
    (run_dir / "output").mkdir(parents=True)
    write_project_bundle(run_dir / "input", files, entry_path=entry_path, project_type=project_type)
    return (processor or TypstPdfProcessor()).run(
        input_dir=run_dir / "input",
        output_dir=run_dir / "output",
        request={"operation": "typst.compile.pdf/v1"},
        limits=limits,
        cancel=threading.Event(),
        executor=executor or BwrapExecutor(),
    )


def output_of(result: ProcessorResult, role: str):
    return next(output for output in result.outputs if output.role == role)


def test_the_typst_starter_builds_to_a_pdf_with_its_words(tmp_path):
    result = build_typst(tmp_path, {"main.typ": TYPST_MAIN})

    text = pdf_text(output_of(result, "pdf").path)
    assert "A Quire project" in text
    assert "built by Quire from a frozen snapshot of the project" in text


def test_outputs_are_the_pdf_the_log_and_the_report_named_after_the_entry(tmp_path):
    files = {"thesis.typ": '= Thesis\n#include "chapters/one.typ"\n', "chapters/one.typ": "Chapter one.\n"}

    result = build_typst(tmp_path, files, entry_path="thesis.typ")

    described = {(output.role, output.media_type, output.filename) for output in result.outputs}
    assert described == {
        ("pdf", "application/pdf", "thesis.pdf"),
        ("log", "text/plain", "thesis.log"),
        ("report", "application/json", "thesis.report.json"),
    }
    assert "Chapter one." in pdf_text(output_of(result, "pdf").path)
    assert output_of(result, "log").path.read_text().startswith("Typst build: quire-typst-pdf/1 typst/")


def test_the_same_bundle_builds_a_byte_identical_pdf_in_another_work_directory(tmp_path):
    files = {"main.typ": TYPST_MAIN + "\nBuilt on #datetime.today().display().\n"}

    first, second = build_typst(tmp_path, files), build_typst(tmp_path, files)

    assert output_of(first, "pdf").path.parent != output_of(second, "pdf").path.parent
    assert sha256_of(output_of(first, "pdf").path) == sha256_of(output_of(second, "pdf").path)
    assert output_of(first, "report").path.read_bytes() == output_of(second, "report").path.read_bytes()


def test_the_manifests_source_epoch_is_the_document_date(tmp_path):
    result = build_typst(tmp_path, {"main.typ": "Built on #datetime.today().display().\n"})

    pdf = output_of(result, "pdf").path
    epoch = datetime.fromtimestamp(SOURCE_EPOCH, tz=UTC)
    assert pypdf.PdfReader(pdf).metadata.creation_date == epoch
    assert f"Built on {epoch:%Y-%m-%d}." in pdf_text(pdf)


def test_the_report_counts_the_words_of_the_compiled_document(tmp_path):
    # 3 + 5 words written, "don't" and "well-known" once each; 4 more that a script computes
    source = '= One two three\n\nDon\'t stop, well-known fact 42.\n\n#("word " * 4)\n'

    result = build_typst(tmp_path, {"main.typ": source})

    report = json.loads(output_of(result, "report").path.read_text())
    assert report == {"words": 12, "counted_by": f"pypdf {pypdf.__version__}"}


def test_a_document_longer_than_the_counting_bound_is_built_without_a_report(tmp_path):
    three_pages = {"main.typ": "One\n#pagebreak()\nTwo\n#pagebreak()\nThree\n"}

    result = build_typst(tmp_path, three_pages, processor=TypstPdfProcessor(max_counted_pages=2))

    assert {output.role for output in result.outputs} == {"pdf", "log"}
    assert any(entry.message == "words not counted: more than 2 pages" for entry in result.diagnostics.entries)


def test_warnings_are_reported_with_file_and_line_and_reach_the_log(tmp_path):
    result = build_typst(tmp_path, {"main.typ": 'Intro\n#set text(font: "No Such Family")\nBody\n'})

    [warning] = [entry for entry in result.diagnostics.entries if entry.severity == "warning"]
    assert (warning.file, warning.line) == ("main.typ", 2)
    assert "no such family" in warning.message
    assert f"main.typ:2: warning: {warning.message}" in output_of(result, "log").path.read_text()


def test_included_files_and_images_of_the_project_are_used(tmp_path):
    files = {
        "main.typ": '= Report\n#include "chapters/intro.typ"\n#image("figures/dot.png", width: 2cm)\n',
        "chapters/intro.typ": "Words from the introduction chapter.\n",
        "figures/dot.png": tiny_png(),
    }

    result = build_typst(tmp_path, files)

    pdf = output_of(result, "pdf").path
    assert "Words from the introduction chapter." in pdf_text(pdf)
    assert len(pypdf.PdfReader(pdf).pages[0].images) == 1


class RecordingBwrapExecutor(BwrapExecutor):
    """The real sandbox, remembering what each run was allowed to read and write."""

    def run(self, argv, *, cwd, writable, readable, env, limits, cancel):
        self.seen = {"argv": list(argv), "writable": list(writable), "readable": list(readable), "env": dict(env)}
        return super().run(argv, cwd=cwd, writable=writable, readable=readable, env=env, limits=limits, cancel=cancel)


def test_the_compiler_runs_in_the_sandbox_with_the_project_read_only_and_no_network(tmp_path):
    executor = RecordingBwrapExecutor()

    result = build_typst(tmp_path, {"main.typ": TYPST_MAIN}, executor=executor)

    job_dir = output_of(result, "pdf").path.parent.parent
    assert executor.seen["writable"] == [job_dir / "output"]
    assert job_dir / "input" in executor.seen["readable"]
    assert "quire_worker.processors.typst.compile_pdf_child" in executor.seen["argv"]
    assert executor.seen["env"]["HTTPS_PROXY"] == "http://127.0.0.1:9"
    notes = [entry.message for entry in result.diagnostics.entries if entry.severity == "info"]
    assert any(note.startswith("compiler network: ") for note in notes)


def test_the_contract_names_the_processor_and_its_packages():
    processor = TypstPdfProcessor()

    assert re.fullmatch(r"quire-typst-pdf/1 typst/[\d.]+ pypdf/[\d.]+ pages-10000 words-2000", processor.contract)
    assert processor.unavailable_reason() is None


def _project_files(import_result) -> dict[str, str | bytes]:
    """The files of an imported project, as the workspace would capture them for a build."""
    bundle_path = output_of(import_result, "bundle").path
    bundle = read_bundle(bundle_path, max_files=1000, max_expanded_bytes=256 * 1024**2)
    assert (bundle.project_type, bundle.entry_path) == ("typst", "main.typ")
    return {item.path: item.data.decode() if item.kind == "text" else item.data for item in bundle.files}


FIVE_TITLES = ["Quarterly Review #3", "Agenda", "Numbers", "Team photo", "Outlook"]


@pytest.mark.parametrize(
    ("deck", "profile", "titles"),
    [
        pytest.param(lambda: five_slide_deck(picture_png())[0], "editable", FIVE_TITLES, id="five-slides-editable"),
        pytest.param(lambda: five_slide_deck(picture_png())[0], "faithful", FIVE_TITLES, id="five-slides-faithful"),
        pytest.param(lambda: deck_with_picture(picture_png()), "editable", [""], id="one-picture"),
        pytest.param(lambda: deck_with_slides(3), "editable", ["", "", ""], id="three-blank-slides"),
    ],
)
def test_an_imported_pptx_project_builds_to_a_pdf_with_a_page_per_slide(tmp_path, import_pptx, deck, profile, titles):
    imported = import_pptx(deck(), profile=profile)

    result = build_typst(tmp_path, _project_files(imported))

    pages = pdf_page_texts(output_of(result, "pdf").path)
    assert len(pages) == len(titles)
    for page, title in zip(pages, titles, strict=True):
        assert title in page
    words = json.loads(output_of(result, "report").path.read_text())["words"]
    assert (words > 0) == any(titles)


def test_a_pdf_reader_reads_the_build_back(tmp_path):
    result = build_typst(tmp_path, {"main.typ": "First\n#pagebreak()\nSecond\n"})

    reader = pypdf.PdfReader(io.BytesIO(output_of(result, "pdf").path.read_bytes()))
    assert [page.extract_text().strip() for page in reader.pages] == ["First", "Second"]
    assert "built 2 pages" in output_of(result, "log").path.read_text()
