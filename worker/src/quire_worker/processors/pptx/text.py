"""Reads a python-pptx text frame into paragraphs of formatted runs, with what they inherit resolved (colour,
font, size, alignment: ``looks.TextLook``) and their fonts mapped to the build's (``fonts.FontMapper``)."""

from dataclasses import dataclass

from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.text.text import _Run

from quire_worker.processors.pptx.fonts import FontMapper, has_east_asian, is_symbol_font, symbol_text
from quire_worker.processors.pptx.looks import TextLook, solid_color
from quire_worker.processors.pptx.slide_model import Paragraph, Run
from quire_worker.processors.pptx.theme import Theme

_DRAWINGML = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_ALIGNMENTS = {"l": "left", "ctr": "center", "r": "right", "just": "justify", "dist": "justify"}
DEFAULT_TEXT_COLOR = "000000"  # a page's own: runs of it carry no colour of their own
_TITLE_PLACEHOLDERS = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.VERTICAL_TITLE}
_BODY_PLACEHOLDERS = {PP_PLACEHOLDER.BODY, PP_PLACEHOLDER.OBJECT, PP_PLACEHOLDER.VERTICAL_BODY}
_SAFE_LINK_SCHEMES = ("http://", "https://", "mailto:")


def text_role(shape) -> str:
    """``title``, ``subtitle``, ``body`` (bulleted by default) or ``text``."""
    if not shape.is_placeholder:
        return "text"
    kind = shape.placeholder_format.type
    if kind in _TITLE_PLACEHOLDERS:
        return "title"
    if kind == PP_PLACEHOLDER.SUBTITLE:
        return "subtitle"
    return "body" if kind in _BODY_PLACEHOLDERS else "text"


@dataclass(frozen=True)
class TextReading:
    """What a frame's runs are read against: the inherited look, the deck's font mapping, an autofit's scale."""

    look: TextLook | None = None
    fonts: FontMapper | None = None
    font_scale: float = 1.0


def read_paragraphs(text_frame, *, role: str, reading: TextReading = TextReading()) -> tuple[Paragraph, ...]:
    """The frame's paragraphs; body placeholders bullet their paragraphs unless told otherwise."""
    paragraphs = tuple(_paragraph(paragraph, role=role, reading=reading) for paragraph in text_frame.paragraphs)
    while paragraphs and not paragraphs[-1].text.strip():
        paragraphs = paragraphs[:-1]
    return paragraphs


def _paragraph(paragraph, *, role: str, reading: TextReading) -> Paragraph:
    level = max(0, min(int(paragraph.level or 0), 8))
    own = paragraph._p.pPr
    algn = reading.look.alignment(own, level) if reading.look else (own.get("algn") if own is not None else None)
    return Paragraph(
        runs=tuple(_runs(paragraph, level, reading)),
        level=level,
        bullet=_bullet(paragraph, role=role),
        align=_ALIGNMENTS.get(algn),
    )


def _runs(paragraph, level: int, reading: TextReading):
    for child in paragraph._p:
        tag = child.tag
        if tag == f"{_DRAWINGML}r":
            run = _Run(child, paragraph)
            if run.text:
                yield _run(run, child.find(f"{_DRAWINGML}rPr"), level, reading)
        elif tag == f"{_DRAWINGML}br":
            yield Run(text="", line_break=True)
        elif tag == f"{_DRAWINGML}fld":
            text = "".join(child.itertext())
            if text:
                yield _run_of_text(text, child.find(f"{_DRAWINGML}rPr"), level, reading)


def _run(run: _Run, properties, level: int, reading: TextReading) -> Run:
    return _run_of_text(run.text, properties, level, reading, link=_link(run))


def _run_of_text(text: str, properties, level: int, reading: TextReading, *, link: str | None = None) -> Run:
    look = reading.look

    def inherited(read):
        if look is not None:
            return look.run_value(properties, level, read)
        return read(properties) if properties is not None else None

    size = inherited(lambda rpr: int(rpr.get("sz")) / 100 if (rpr.get("sz") or "").isdigit() else None)
    color = look.color(properties, level) if look is not None else solid_color(properties, Theme())
    family = None
    if look is not None and reading.fonts is not None:
        named = look.font(properties, level)
        if is_symbol_font(named):
            text = symbol_text(text, named)
        family = reading.fonts.east_asian(look.east_asian_font(properties, level)) if has_east_asian(text) else None
        family = family or reading.fonts.family(named)
    return Run(
        text=text,
        bold=bool(inherited(_flag("b"))),
        italic=bool(inherited(_flag("i"))),
        underline=bool(inherited(lambda rpr: rpr.get("u") not in (None, "none") if rpr.get("u") else None)),
        link=link,
        size=round(size * reading.font_scale, 2) if size else None,
        color=None if color in (None, DEFAULT_TEXT_COLOR) else color,
        font=family,
    )


def _flag(name: str):
    return lambda rpr: rpr.get(name) in ("1", "true") if rpr.get(name) is not None else None


def _link(run: _Run) -> str | None:
    try:
        address = run.hyperlink.address
    except (KeyError, ValueError, AttributeError):
        return None  # a dangling relationship: keep the text, lose the link
    if address and address.lower().startswith(_SAFE_LINK_SCHEMES) and len(address) <= 2000:
        return address
    return None


def _bullet(paragraph, *, role: str) -> str | None:
    properties = paragraph._p.pPr
    if properties is not None:
        for child in properties:
            if child.tag == f"{_DRAWINGML}buNone":
                return None
            if child.tag == f"{_DRAWINGML}buAutoNum":
                return "number"
            if child.tag in (f"{_DRAWINGML}buChar", f"{_DRAWINGML}buBlip"):
                return "bullet"
    return "bullet" if role == "body" else None
