"""The pdf.index.text/v1 processor: per-page text from a sandboxed child, bounded, with classified failures."""

import json
import threading

import pytest

from quire_worker.contracts import FailureClass, Limits, ProcessorFailure
from quire_worker.processors.pdf.index_text import PdfTextProcessor
from tests.library.pdfs import damaged_pdf, encrypted_pdf, text_pdf
from tests.worker.executors import SubprocessTestExecutor

LIMITS = Limits(wall_seconds=60, cpu_seconds=60)


@pytest.fixture
def extract(tmp_path):
    """``extract(pdf_bytes, processor=...)`` → (result, pages document, executor)."""

    def run(data: bytes, *, processor: PdfTextProcessor | None = None, limits: Limits = LIMITS):
        input_dir, output_dir = tmp_path / "input", tmp_path / "output"
        input_dir.mkdir(exist_ok=True)
        output_dir.mkdir(exist_ok=True)
        (input_dir / "input.pdf").write_bytes(data)
        executor = SubprocessTestExecutor()
        result = (processor or PdfTextProcessor()).run(
            input_dir=input_dir,
            output_dir=output_dir,
            request={},
            limits=limits,
            cancel=threading.Event(),
            executor=executor,
        )
        return result, json.loads(result.outputs[0].path.read_text()), executor

    return run


def test_text_is_extracted_per_page_in_a_child_process(extract):
    result, pages, executor = extract(text_pdf(["Lighthouses of the north", "Harbours (and piers)"]))

    assert [(output.role, output.media_type) for output in result.outputs] == [("pages", "application/json")]
    assert pages["schema"] == "pdf-pages/v1" and (pages["page_count"], pages["truncated"]) == (2, False)
    assert [(page["number"], page["text"]) for page in pages["pages"]] == [
        (1, "Lighthouses of the north"),
        (2, "Harbours (and piers)"),
    ]
    assert "quire_worker.processors.pdf.index_text_child" in executor.last_argv
    assert [str(path) for path in executor.last_writable] == [str(result.outputs[0].path.parent)]


def test_pages_and_characters_are_bounded(extract):
    processor = PdfTextProcessor(max_pages=2, max_page_chars=5)

    _, pages, _ = extract(text_pdf(["abcdefgh", "ijklmnop", "qrstuvwx"]), processor=processor)

    assert (pages["page_count"], pages["indexed_pages"], pages["truncated"]) == (3, 2, True)
    assert [page["text"] for page in pages["pages"]] == ["abcde", "ijklm"]


@pytest.mark.parametrize(
    ("data", "code"), [(damaged_pdf(), "pdf_corrupt"), (encrypted_pdf(), "pdf_encrypted")], ids=["corrupt", "locked"]
)
def test_unreadable_pdfs_fail_as_invalid_input(extract, data, code):
    with pytest.raises(ProcessorFailure) as failure:
        extract(data)

    assert (failure.value.failure_class, failure.value.code) == (FailureClass.INVALID_INPUT, code)


def test_a_pdf_that_takes_too_long_fails_as_a_resource_limit(extract):
    processor = PdfTextProcessor(time_budget_seconds=0.0)

    with pytest.raises(ProcessorFailure) as failure:
        extract(text_pdf(["one", "two"]), processor=processor)

    assert (failure.value.failure_class, failure.value.code) == (
        FailureClass.RESOURCE_LIMIT,
        "extraction_time_exceeded",
    )


def test_the_hard_wall_clock_limit_kills_the_child(extract):
    with pytest.raises(ProcessorFailure) as failure:
        extract(text_pdf(["one"]), limits=Limits(wall_seconds=0.001, cpu_seconds=60))

    assert (failure.value.failure_class, failure.value.code) == (FailureClass.RESOURCE_LIMIT, "wall_time_exceeded")
