"""scripts/typst_fonts.py: Typst's default fonts, copied out of the worker's typst wheel for the live preview."""

import re
from pathlib import Path

import typst

from scripts.typst_fonts import install

PREVIEW_WORKER = Path(__file__).resolve().parents[2] / "frontend" / "src" / "preview" / "worker.js"


def _described(fonts) -> list[tuple]:
    return sorted((font.family, font.style, font.weight) for font in fonts)


def test_the_copied_fonts_are_the_ones_the_worker_sets_type_with(tmp_path):
    install(tmp_path)

    copied = typst.Fonts(include_system_fonts=False, include_embedded_fonts=False, font_paths=[str(tmp_path)])
    embedded = typst.Fonts(include_system_fonts=False, include_embedded_fonts=True)
    assert _described(copied.fonts()) == _described(embedded.fonts())


def test_the_preview_loads_every_copied_font_by_its_file_name(tmp_path):
    names = install(tmp_path)

    listed = re.search(r"const FONT_FILES = \[(.*?)\];", PREVIEW_WORKER.read_text(encoding="utf-8"), re.S).group(1)
    assert sorted(re.findall(r'"([^"]+)"', listed)) == names


def test_a_document_lays_out_the_same_with_the_copied_fonts_alone(tmp_path):
    """The preview has only the copied files; the worker has the embedded fonts: same bytes, same pages."""
    fonts = tmp_path / "fonts"
    install(fonts)
    document = tmp_path / "main.typ"
    document.write_text("= Title\n\n#lorem(400)\n\n$ sum_(i=1)^n i = (n(n+1))/2 $\n\n`code`\n", encoding="utf-8")
    only_copied = typst.Fonts(include_system_fonts=False, include_embedded_fonts=False, font_paths=[str(fonts)])
    only_embedded = typst.Fonts(include_system_fonts=False, include_embedded_fonts=True)

    with_copied = typst.compile(str(document), format="png", ppi=72.0, font_paths=only_copied)
    with_embedded = typst.compile(str(document), format="png", ppi=72.0, font_paths=only_embedded)

    assert with_copied == with_embedded
