"""What of each page is not text, as pictures: the page with its text and formulas hidden (the slide's
background), and each formula cut out of the page with only the text hidden, its Typst source as alt text.

Both are rendered from a copy of the project beside an entry of Quire's that includes the project's own and
hides with ``hide``, which keeps the layout: the pictures line up with the text boxes read from the normal
compile. The formula entry also records, before each equation, where it starts, its size and its source,
rebuilt from the equation's content (``quire-export-source``: attachments as ``^(…)``/``_(…)``, fractions as
``(…)/(…)``, symbols as their Unicode characters), since Typst does not hand out an element's source text.
"""

import io
import json
import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path

import typst
from PIL import Image

from quire_worker.processors.typst.markup import string_literal

_SOURCE = """#let quire-export-source(it) = {
  if type(it) == str { return it }
  if type(it) != content { return repr(it) }
  let kind = it.func()
  if kind == text { return it.text }
  if kind == [ ].func() or kind == h { return " " }
  if kind == [a b].func() { return it.children.map(quire-export-source).join() }
  if kind == math.attach {
    let out = quire-export-source(it.base)
    for (key, mark) in (("b", "_"), ("t", "^")) {
      if it.has(key) and it.at(key) != none { out += mark + "(" + quire-export-source(it.at(key)) + ")" }
    }
    return out
  }
  if kind == math.frac { return "(" + quire-export-source(it.num) + ")/(" + quire-export-source(it.denom) + ")" }
  if kind == math.root { return "sqrt(" + quire-export-source(it.radicand) + ")" }
  if it.has("child") { return quire-export-source(it.child) }
  if it.has("body") { return quire-export-source(it.body) }
  if it.has("children") { return it.children.map(quire-export-source).join() }
  if it.has("text") { return quire-export-source(it.text) }
  repr(it)
}
"""
_FORMULAS_ONLY = """#let quire-export-in-formula = state("quire-export-in-formula", false)
#show math.equation: it => {{
  context [#metadata((block: it.block, size: measure(it), at: here().position(),
                      source: quire-export-source(it.body)))<quire-export-formula>]
  quire-export-in-formula.update(true); it; quire-export-in-formula.update(false)
}}
#show text: it => context if quire-export-in-formula.get() {{ it }} else {{ hide(it) }}
#include {entry}
"""
_NEITHER = """#show math.equation: hide
#show text: hide
#include {entry}
"""
_LENGTH = re.compile(r"^(-?[0-9.]+)pt$")
PAD = 2.0  # points around a formula's box, so that no stroke of it is cut off


@dataclass(frozen=True)
class Formula:
    page: int  # 1-based
    x: float  # points from the page's top-left corner
    y: float
    width: float
    height: float
    source: str
    png: bytes = b""


@dataclass(frozen=True)
class PagePictures:
    backgrounds: list[bytes]
    formulas: list[Formula]


def page_pictures(
    files_root: Path, entry_path: str, *, scratch_dir: Path, isolation, ppi: float, page_widths: list[float]
) -> PagePictures:
    copy = scratch_dir / "pictures"
    shutil.copytree(files_root, copy, symlinks=True)
    entry = string_literal(entry_path)
    neither = _compiler(copy, _NEITHER.format(entry=entry), isolation)
    formulas_only = _compiler(copy, _SOURCE + _FORMULAS_ONLY.format(entry=entry), isolation)
    backgrounds = _pngs(neither, ppi)
    found = json.loads(formulas_only.query("<quire-export-formula>", field="value"))
    formulas = [_formula(entry, page_widths) for entry in found]
    if formulas:
        pages = _pngs(formulas_only, ppi)
        formulas = [_cut(formula, pages[formula.page - 1], ppi) for formula in formulas]
    return PagePictures(backgrounds=backgrounds, formulas=[formula for formula in formulas if formula.png])


def _compiler(copy: Path, source: str, isolation):
    wrapper = copy / f".quire-export-{uuid.uuid4().hex}.typ"
    wrapper.write_text(source, encoding="utf-8")
    return typst.Compiler(
        str(wrapper),
        root=str(copy),
        font_paths=[str(copy)],
        ignore_system_fonts=True,
        package_path=str(isolation.packages),
        package_cache_path=str(isolation.cache),
    )


def _pngs(compiler, ppi: float) -> list[bytes]:
    pages = compiler.compile(format="png", ppi=ppi)
    return pages if isinstance(pages, list) else [pages]


def _points(value: str) -> float:
    match = _LENGTH.match(str(value))
    return float(match.group(1)) if match else 0.0


def _formula(entry: dict, page_widths: list[float]) -> Formula:
    """The box a formula takes. An inline one starts at its baseline's left end; a displayed one is a block
    as wide as its container, the formula centred in it (the container taken as the page less equal margins)."""
    at, size = entry["at"], entry["size"]
    page, x, y = int(at["page"]), _points(at["x"]), _points(at["y"])
    width, height = _points(size["width"]), _points(size["height"])
    if entry["block"]:
        container = page_widths[page - 1] - 2 * x
        x, top = x + max(0.0, (container - width) / 2), y
    else:
        # Most of an inline formula stands above the baseline, and its measured height leaves out what it
        # raises (exponents): the cut is generous, since nothing else is drawn in this rendering there.
        top = y - 1.15 * height
        width, height = width + 0.2 * height, 1.6 * height
    return Formula(page, x - PAD, top - PAD, width + 2 * PAD, height + 2 * PAD, " ".join(entry["source"].split()))


def _cut(formula: Formula, page_png: bytes, ppi: float) -> Formula:
    scale = ppi / 72
    with Image.open(io.BytesIO(page_png)) as page:
        box = (
            max(0, round(formula.x * scale)),
            max(0, round(formula.y * scale)),
            min(page.width, round((formula.x + formula.width) * scale)),
            min(page.height, round((formula.y + formula.height) * scale)),
        )
        if box[2] <= box[0] or box[3] <= box[1]:
            return formula
        output = io.BytesIO()
        page.crop(box).save(output, format="PNG", optimize=False)
    left, top = box[0] / scale, box[1] / scale
    width, height = (box[2] - box[0]) / scale, (box[3] - box[1]) / scale
    return Formula(formula.page, left, top, width, height, formula.source, output.getvalue())
