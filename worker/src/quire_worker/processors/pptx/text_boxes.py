"""Lines of a compiled page as PowerPoint text boxes: each at its place, with its runs' fonts, sizes, weights,
styles, colours and links, list items as bulleted or numbered paragraphs.

A box does not wrap and has no insets, so its first baseline lands where Typst put it whatever the width
PowerPoint computes. Typst's fonts are mapped to fonts PowerPoint has (``office_family``): the free twins
the PPTX import substitutes go back to the Office fonts they stand for, other families to an Office font
of their kind.
"""

from dataclasses import dataclass, field

from lxml import etree
from pptx.dml.color import RGBColor
from pptx.enum.text import MSO_AUTO_SIZE, PP_ALIGN
from pptx.util import Emu, Pt

from quire_worker.processors.typst.page_text import TextLine

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
EMU_PER_POINT = 12700
ASCENT = 0.9  # of the font size: where PowerPoint puts a box's first baseline below its top, near enough
_OFFICE_FONTS = {"arial", "calibri", "cambria", "candara", "consolas", "constantia", "corbel", "courier new",
                 "georgia", "segoe ui", "tahoma", "times new roman", "trebuchet ms", "verdana", "aptos",
                 "arial black", "century gothic", "garamond", "palatino linotype", "book antiqua"}  # fmt: skip
_TWINS = {"carlito": "Calibri", "caladea": "Cambria", "liberation sans": "Arial",
          "liberation serif": "Times New Roman", "liberation mono": "Courier New"}  # fmt: skip


def office_family(family: str) -> str:
    """A family PowerPoint has for Typst's ``family``."""
    key = family.lower()
    if key in _OFFICE_FONTS:
        return family
    if key in _TWINS:
        return _TWINS[key]
    if "mono" in key or "code" in key or "courier" in key:
        return "Courier New"
    if "sans" in key or "gothic" in key or "grotesk" in key:
        return "Calibri"
    return "Cambria"  # Libertinus Serif, New Computer Modern and other serif faces


@dataclass
class FontMapping:
    """Typst family → PowerPoint family, for the report."""

    mapped: dict[str, str] = field(default_factory=dict)

    def family(self, typst_family: str) -> str:
        return self.mapped.setdefault(typst_family, office_family(typst_family))


def add_text_boxes(slide, lines: list[TextLine], *, scale: float, offset: tuple[int, int], fonts: FontMapping) -> int:
    """One text box per line on ``slide`` (page points × ``scale`` → EMU, shifted by ``offset``); the words
    the boxes hold."""
    words = 0
    for number, line in enumerate(lines, start=1):
        box = _box(slide, line, scale=scale, offset=offset)
        box.name = f"Text {number}"
        frame = box.text_frame
        frame.word_wrap = False
        frame.auto_size = MSO_AUTO_SIZE.NONE
        frame.margin_left = frame.margin_right = frame.margin_top = frame.margin_bottom = 0
        paragraph = frame.paragraphs[0]
        if line.align:
            paragraph.alignment = PP_ALIGN.CENTER if line.align == "center" else PP_ALIGN.RIGHT
        if line.bullet:
            _bulleted(paragraph, line, scale=scale)
        for source in line.runs:
            run = paragraph.add_run()
            run.text = source.text
            font = run.font
            font.size = Pt(round(source.size * scale * 2) / 2)  # PowerPoint keeps half points
            font.name = fonts.family(source.family)
            font.bold = source.bold
            font.italic = source.italic
            if source.color != "000000":
                font.color.rgb = RGBColor.from_string(source.color.upper())
            if source.link:
                run.hyperlink.address = source.link
        words += len(line.text.split())
    return words


def _box(slide, line: TextLine, *, scale: float, offset: tuple[int, int]):
    size = line.size
    known = line.right - line.x  # 0 when the PDF did not tell the glyphs' widths
    start, width_pt = line.x, known if known > 0 else max(len(line.text) * 0.55 * size, size)
    # A box wider than the line, on the side it grows to: it keeps its middle or its end in another font's widths.
    if line.align == "center":
        start, width_pt = line.x - 0.25 * width_pt, 1.5 * width_pt
    elif line.align == "right":
        start, width_pt = line.x - 0.5 * width_pt, 1.5 * width_pt
    left = offset[0] + round(start * scale * EMU_PER_POINT)
    top = offset[1] + round((line.baseline - ASCENT * size) * scale * EMU_PER_POINT)
    width = round(width_pt * scale * EMU_PER_POINT)
    height = round(1.2 * size * scale * EMU_PER_POINT)
    return slide.shapes.add_textbox(Emu(max(left, 0)), Emu(max(top, 0)), Emu(width), Emu(height))


def _bulleted(paragraph, line: TextLine, *, scale: float) -> None:
    """A list item: the marker hangs at the line's x and the text starts where Typst put it."""
    indent = round((line.runs[0].x - line.bullet_x) * scale * EMU_PER_POINT)
    properties = paragraph._p.get_or_add_pPr()
    properties.set("marL", str(indent))
    properties.set("indent", str(-indent))
    if line.bullet[:-1].isdigit():
        etree.SubElement(properties, f"{A}buAutoNum", type="arabicPeriod", startAt=line.bullet[:-1])
    else:
        etree.SubElement(properties, f"{A}buChar", char=line.bullet)
