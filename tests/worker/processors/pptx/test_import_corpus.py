"""python-pptx's own test decks (tests/corpora/pptx/python-pptx, MIT) import and build: every deck with the
editable profile, and the decks without slides with the faithful one too (an empty project and its report)."""

import json
from pathlib import Path

import pytest
import typst

from tests.worker.processors.pptx.test_import_round_trip import outputs_by_role, unpacked_project

CORPUS = Path(__file__).parents[3] / "corpora" / "pptx" / "python-pptx"
DECKS = sorted(CORPUS.glob("*.pptx"))
WITHOUT_SLIDES = ("lyt-shapes", "minimal", "mst-placeholders", "no-slides", "prs-properties")


def test_the_corpus_is_there():
    assert len(DECKS) >= 20 and {deck.stem for deck in DECKS} >= set(WITHOUT_SLIDES)


@pytest.mark.parametrize("deck", DECKS, ids=lambda path: path.stem)
def test_each_deck_imports_into_a_project_that_builds_to_pdf(import_pptx, deck, tmp_path):
    result = import_pptx(deck.read_bytes(), filename=deck.name)

    unpacked_project(result, tmp_path)
    entry, root = str(tmp_path / "main.typ"), str(tmp_path)
    pdf = typst.compile(entry, root=root, font_paths=[root], ignore_system_fonts=True)
    assert pdf.startswith(b"%PDF")
    report = json.loads(outputs_by_role(result)["report"].path.read_text())
    assert report["source"]["filename"] == deck.name


@pytest.mark.parametrize("name", WITHOUT_SLIDES)
def test_a_deck_without_slides_imports_faithfully_as_an_empty_project(import_pptx, name, tmp_path):
    result = import_pptx((CORPUS / f"{name}.pptx").read_bytes(), profile="faithful")

    bundle = unpacked_project(result, tmp_path)
    assert [item.path for item in bundle.files] == ["main.typ"]
    assert json.loads(outputs_by_role(result)["report"].path.read_text())["slides"] == []
