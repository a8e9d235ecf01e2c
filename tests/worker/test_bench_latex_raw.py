"""The raw LaTeX benchmark builds what it claims to build."""

import importlib.util
from pathlib import Path

from tests.worker.bundles import pdf_page_texts

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_latex_raw.py"


def load_benchmark():
    spec = importlib.util.spec_from_file_location("bench_latex_raw", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_document_has_twenty_pages_and_a_complete_table_of_contents(bundle, build):
    benchmark = load_benchmark()
    bundle({"main.tex": benchmark.twenty_page_document()})

    result = build()

    pages = pdf_page_texts(next(o.path for o in result.outputs if o.role == "pdf"))
    assert len(pages) == 20
    assert "19 Section 19 20" in pages[0]
