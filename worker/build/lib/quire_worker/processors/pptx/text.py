"""Reads a python-pptx text frame into paragraphs of formatted runs."""

from pptx.enum.dml import MSO_COLOR_TYPE
from pptx.enum.shapes import PP_PLACEHOLDER
from pptx.enum.text import PP_ALIGN
from pptx.text.text import _Run

from quire_worker.processors.pptx.slide_model import Paragraph, Run

_DRAWINGML = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_ALIGNMENTS = {
    PP_ALIGN.LEFT: "left",
    PP_ALIGN.CENTER: "center",
    PP_ALIGN.RIGHT: "right",
    PP_ALIGN.JUSTIFY: "justify",
}
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


def read_paragraphs(text_frame, *, role: str) -> tuple[Paragraph, ...]:
    """The frame's paragraphs; body placeholders bullet their paragraphs unless told otherwise."""
    paragraphs = tuple(_paragraph(paragraph, role=role) for paragraph in text_frame.paragraphs)
    while paragraphs and not paragraphs[-1].text.strip():
        paragraphs = paragraphs[:-1]
    return paragraphs


def _paragraph(paragraph, *, role: str) -> Paragraph:
    return Paragraph(
        runs=tuple(_runs(paragraph)),
        level=max(0, min(int(paragraph.level or 0), 8)),
        bullet=_bullet(paragraph, role=role),
        align=_ALIGNMENTS.get(paragraph.alignment),
    )


def _runs(paragraph):
    for child in paragraph._p:
        tag = child.tag
        if tag == f"{_DRAWINGML}r":
            run = _Run(child, paragraph)
            if run.text:
                yield _run(run)
        elif tag == f"{_DRAWINGML}br":
            yield Run(text="", line_break=True)
        elif tag == f"{_DRAWINGML}fld":
            text = "".join(child.itertext())
            if text:
                yield Run(text=text)


def _run(run: _Run) -> Run:
    font = run.font
    return Run(
        text=run.text,
        bold=bool(font.bold),
        italic=bool(font.italic),
        underline=bool(font.underline),
        link=_link(run),
        size=round(font.size.pt, 2) if font.size else None,
        color=_rgb(font.color),
    )


def _link(run: _Run) -> str | None:
    try:
        address = run.hyperlink.address
    except (KeyError, ValueError, AttributeError):
        return None  # a dangling relationship: keep the text, lose the link
    if address and address.lower().startswith(_SAFE_LINK_SCHEMES) and len(address) <= 2000:
        return address
    return None


def _rgb(color) -> str | None:
    try:
        if color.type == MSO_COLOR_TYPE.RGB:
            return str(color.rgb).lower()
    except (AttributeError, ValueError):
        pass
    return None  # theme and preset colours stay with the theme


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
