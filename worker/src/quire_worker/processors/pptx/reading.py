"""Reads a presentation (python-pptx) into a ``Deck``, reporting what cannot be carried over.

Shapes inside groups are mapped to slide coordinates through each group's child transform.
Every element that becomes editable Typst is remembered in ``converted`` so that the
faithful profile can leave it out of the rendered background.
"""

from dataclasses import dataclass, field

from pptx.enum.shapes import MSO_AUTO_SHAPE_TYPE
from pptx.shapes.autoshape import Shape
from pptx.shapes.connector import Connector
from pptx.shapes.graphfrm import GraphicFrame
from pptx.shapes.group import GroupShape
from pptx.shapes.picture import Movie, Picture

from quire_worker.processors.child_protocol import ConversionFailure
from quire_worker.processors.pptx.fonts import FontMapper
from quire_worker.processors.pptx.looks import fill_color, frame_layout, shape_look, text_look
from quire_worker.processors.pptx.pictures import AssetStore, picture_block
from quire_worker.processors.pptx.slide_model import (
    EMU_PER_POINT,
    ConversionReport,
    Deck,
    FilledShape,
    Frame,
    ImportBounds,
    Slide,
    TableBlock,
    TableCell,
    TextBlock,
)
from quire_worker.processors.pptx.text import TextReading, read_paragraphs, text_role
from quire_worker.processors.pptx.theme import A, P, Theme, slide_theme

_NAMESPACES = {
    "p": "http://schemas.openxmlformats.org/presentationml/2006/main",
    "a": "http://schemas.openxmlformats.org/drawingml/2006/main",
    "mc": "http://schemas.openxmlformats.org/markup-compatibility/2006",
}
_GRAPHIC_KINDS = {
    "http://schemas.openxmlformats.org/drawingml/2006/diagram": ("smartart", "SmartArt diagram"),
    "http://schemas.openxmlformats.org/drawingml/2006/chart": ("chart", "chart"),
    "http://schemas.openxmlformats.org/presentationml/2006/ole": ("embedded_object", "embedded OLE object"),
}
_DEFAULT_SLIDE = (9144000, 6858000)  # 10 in by 7.5 in, PowerPoint's default when a deck names none


@dataclass(frozen=True)
class Placement:
    """Maps EMU coordinates of one shape tree (the slide or a group's inside) to slide points."""

    scale_x: float = 1 / EMU_PER_POINT
    scale_y: float = 1 / EMU_PER_POINT
    offset_x: float = 0.0
    offset_y: float = 0.0

    def frame(self, left, top, width, height, rotation: float = 0.0) -> Frame:
        return Frame(
            x=self.offset_x + left * self.scale_x,
            y=self.offset_y + top * self.scale_y,
            width=width * self.scale_x,
            height=height * self.scale_y,
            rotation=rotation,
        )

    def inside(self, group_element) -> "Placement":
        xfrm = group_element.xfrm
        if xfrm is None or None in (xfrm.off, xfrm.ext, xfrm.chOff, xfrm.chExt):
            return self
        ratio_x = xfrm.ext.cx / xfrm.chExt.cx if xfrm.chExt.cx else 1.0
        ratio_y = xfrm.ext.cy / xfrm.chExt.cy if xfrm.chExt.cy else 1.0
        return Placement(
            scale_x=self.scale_x * ratio_x,
            scale_y=self.scale_y * ratio_y,
            offset_x=self.offset_x + self.scale_x * (xfrm.off.x - xfrm.chOff.x * ratio_x),
            offset_y=self.offset_y + self.scale_y * (xfrm.off.y - xfrm.chOff.y * ratio_y),
        )


@dataclass(frozen=True)
class ConvertedElement:
    """A shape's XML element that became Typst: ``remove`` it or ``clear_text`` from a background."""

    element: object
    treatment: str


@dataclass
class SlideReading:
    number: int
    bounds: ImportBounds
    report: ConversionReport
    assets: AssetStore
    slide_frame: Frame
    theme: Theme = field(default_factory=Theme)
    fonts: FontMapper = field(default_factory=FontMapper)
    faithful: bool = False  # what Typst would only approximate stays in LibreOffice's background
    converted: list = field(default_factory=list)
    blocks: list = field(default_factory=list)
    shape_count: int = 0

    def count_shape(self) -> None:
        self.shape_count += 1
        if self.shape_count > self.bounds.max_shapes_per_slide:
            raise ConversionFailure(
                "resource_limit",
                "too_many_shapes",
                f"Slide {self.number} has more than {self.bounds.max_shapes_per_slide} shapes.",
            )

    def drop(self, kind: str, shape, detail: str) -> None:
        self.report.dropped(kind, slide=self.number, shape=getattr(shape, "name", ""), detail=detail)

    def approximate(self, kind: str, shape, detail: str) -> None:
        self.report.approximated(kind, slide=self.number, shape=getattr(shape, "name", ""), detail=detail)


def read_deck(
    presentation,
    *,
    bounds: ImportBounds,
    report: ConversionReport,
    assets: AssetStore,
    converted: list,
    fonts: FontMapper | None = None,
    faithful: bool = False,
) -> Deck:
    """The whole deck; ``converted`` receives the XML elements that became Typst, ``fonts`` the families named."""
    fonts = fonts if fonts is not None else FontMapper()
    width_emu = presentation.slide_width or _DEFAULT_SLIDE[0]
    height_emu = presentation.slide_height or _DEFAULT_SLIDE[1]
    slides = list(presentation.slides)
    if len(slides) > bounds.max_slides:
        raise ConversionFailure(
            "resource_limit",
            "too_many_slides",
            f"The presentation has {len(slides)} slides; at most {bounds.max_slides} can be imported.",
        )
    slide_frame = Frame(0, 0, width_emu / EMU_PER_POINT, height_emu / EMU_PER_POINT)
    read, masters = [], {}
    for number, slide in enumerate(slides, start=1):
        theme = slide_theme(slide, masters)
        reading = SlideReading(number, bounds, report, assets, slide_frame, theme=theme, fonts=fonts, faithful=faithful)
        read.append(_read_slide(slide, reading))
        converted.extend(reading.converted)
    return Deck(width=slide_frame.width, height=slide_frame.height, slides=tuple(read))


def _read_slide(slide, reading: SlideReading) -> Slide:
    for shape in slide.shapes:
        _read_shape(shape, Placement(), depth=0, reading=reading)
    _report_slide_extras(slide, reading)
    title_shape = slide.shapes.title
    return Slide(
        number=reading.number,
        title=(title_shape.text_frame.text if title_shape is not None and title_shape.has_text_frame else ""),
        blocks=tuple(reading.blocks),
        notes=_notes(slide),
        hidden=slide._element.get("show") in ("0", "false"),
        fill=_background_fill(slide, reading.theme),
    )


def _read_shape(shape, placement: Placement, *, depth: int, reading: SlideReading) -> None:
    reading.count_shape()
    if isinstance(shape, GroupShape):
        _read_group(shape, placement, depth=depth, reading=reading)
    elif isinstance(shape, Movie) or _is_audio(shape):
        reading.drop("media", shape, "embedded video or audio")
    elif isinstance(shape, Picture):
        frame = _frame(shape, placement, reading)
        block = picture_block(
            shape,
            frame,
            slide=reading.number,
            bounds=reading.bounds,
            report=reading.report,
            assets=reading.assets,
        )
        _keep(shape, block, reading)
    elif isinstance(shape, GraphicFrame):
        _read_graphic_frame(shape, placement, reading)
    elif isinstance(shape, Connector):
        reading.drop("connector", shape, "line or connector")
    elif isinstance(shape, Shape):
        _read_autoshape(shape, placement, reading)
    else:
        reading.drop("unsupported_shape", shape, type(shape).__name__)


def _read_group(group, placement: Placement, *, depth: int, reading: SlideReading) -> None:
    if depth + 1 > reading.bounds.max_group_depth:
        raise ConversionFailure(
            "resource_limit",
            "groups_too_deep",
            f"Slide {reading.number} nests groups more than {reading.bounds.max_group_depth} deep.",
        )
    if group.rotation:
        reading.approximate("group", group, "group rotation ignored")
    inner = placement.inside(group._element)
    for shape in group.shapes:
        _read_shape(shape, inner, depth=depth + 1, reading=reading)


def _read_graphic_frame(shape, placement: Placement, reading: SlideReading) -> None:
    if shape.has_table:
        _keep(shape, _table_block(shape, _frame(shape, placement, reading), placement), reading)
        reading.approximate("table", shape, "table style (colours, banding, borders) not kept")
        return
    uri = shape._element.graphicData_uri if hasattr(shape._element, "graphicData_uri") else ""
    kind, label = _GRAPHIC_KINDS.get(uri, ("unsupported_graphic", "graphic frame"))
    reading.drop(kind, shape, label)


def _read_autoshape(shape, placement: Placement, reading: SlideReading) -> None:
    frame = _frame(shape, placement, reading)
    look = shape_look(shape._element, reading.theme)
    # A gradient or pattern Typst would flatten: the faithful profile leaves it to LibreOffice's rendering.
    drawn = (look.fill is not None or look.outline is not None) and not (reading.faithful and look.approximation)
    if drawn:
        ellipse = _auto_shape_type(shape) == MSO_AUTO_SHAPE_TYPE.OVAL
        if not ellipse and _auto_shape_type(shape) != MSO_AUTO_SHAPE_TYPE.RECTANGLE:
            reading.approximate("shape", shape, "outline drawn as a rectangle")
        if look.approximation:
            reading.approximate("fill", shape, look.approximation)
        block = FilledShape(
            frame=frame, fill=look.fill, ellipse=ellipse, outline=look.outline, outline_width=look.outline_width
        )
        reading.blocks.append(block)
    elif not shape.is_placeholder and _draws_geometry(shape) and not reading.faithful:
        reading.drop("shape", shape, "shape drawing (a picture fill, or a style its theme lacks)")
    role = text_role(shape)
    paragraphs, layout = (), frame_layout(shape)
    if shape.has_text_frame:
        text = TextReading(
            look=text_look(shape, reading.theme, role), fonts=reading.fonts, font_scale=layout.font_scale
        )
        paragraphs = read_paragraphs(shape.text_frame, role=role, reading=text)
    has_text = any(paragraph.text.strip() for paragraph in paragraphs)
    if has_text:
        block = TextBlock(
            frame=frame,
            paragraphs=paragraphs,
            role=role,
            anchor=layout.anchor,
            insets=layout.insets,
            spacing_scale=layout.spacing_scale,
        )
        reading.blocks.append(block)
    if drawn:
        reading.converted.append(ConvertedElement(shape._element, "remove"))
    elif has_text:
        reading.converted.append(ConvertedElement(shape._element, "clear_text"))


def _table_block(shape, frame: Frame, placement: Placement) -> TableBlock:
    table = shape.table
    widths = tuple(column.width * placement.scale_x for column in table.columns)
    heights = tuple(row.height * placement.scale_y for row in table.rows)
    rows = []
    for row in table.rows:
        cells = []
        for cell in row.cells:
            if cell.is_spanned:
                continue
            cells.append(
                TableCell(
                    paragraphs=read_paragraphs(cell.text_frame, role="text"),
                    colspan=cell.span_width if cell.is_merge_origin else 1,
                    rowspan=cell.span_height if cell.is_merge_origin else 1,
                )
            )
        rows.append(tuple(cells))
    return TableBlock(
        frame=frame, column_widths=widths, row_heights=heights, rows=tuple(rows), header=bool(table.first_row)
    )


def _keep(shape, block, reading: SlideReading) -> None:
    if block is not None:
        reading.blocks.append(block)
        reading.converted.append(ConvertedElement(shape._element, "remove"))


def _frame(shape, placement: Placement, reading: SlideReading) -> Frame:
    try:
        geometry = (shape.left, shape.top, shape.width, shape.height)
    except (AttributeError, ValueError, KeyError):
        geometry = (None,)
    if None in geometry:
        reading.approximate("position", shape, "no position; placed over the whole slide")
        return reading.slide_frame
    return placement.frame(*geometry, rotation=float(getattr(shape, "rotation", 0.0) or 0.0))


def _background_fill(slide, theme: Theme) -> str | None:
    """The solid (or first gradient) colour of the slide's background, else its layout's, else its master's."""
    for owner in (slide, slide.slide_layout, slide.slide_layout.slide_master):
        background = owner._element.find(f"{P}cSld/{P}bg")
        if background is None:
            continue
        properties = background.find(f"{P}bgPr")
        if properties is not None:
            fill = next((child for child in properties if child.tag != f"{A}effectLst"), None)
            return fill_color(fill, theme)[0]
        reference = background.find(f"{P}bgRef")
        picked = theme.style_fill(reference) if reference is not None else None
        return fill_color(picked[1], theme, picked[0])[0] if picked else None
    return None


def _auto_shape_type(shape):
    try:
        return shape.auto_shape_type
    except (ValueError, NotImplementedError):
        return None


def _draws_geometry(shape) -> bool:
    """Whether PowerPoint would paint something besides text (a styled or filled outline)."""
    element = shape._element
    has_style = element.find("p:style", _NAMESPACES) is not None
    properties = element.spPr
    has_fill_or_line = properties is not None and any(
        child.tag.split("}")[-1] in ("gradFill", "blipFill", "pattFill", "solidFill", "ln") for child in properties
    )
    return has_style or has_fill_or_line


def _is_audio(shape) -> bool:
    if not isinstance(shape, Picture):
        return False
    return bool(shape._element.xpath(".//a:audioFile | .//a:videoFile | .//a:wavAudioFile"))


def _notes(slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return frame.text if frame is not None else ""


def _report_slide_extras(slide, reading: SlideReading) -> None:
    element = slide._element
    if element.find("p:timing", _NAMESPACES) is not None:
        reading.drop("animation", None, "slide animations")
    if element.find("p:transition", _NAMESPACES) is not None:
        reading.drop("transition", None, "slide transition")
    for _ in element.iterfind("p:cSld/p:spTree//mc:AlternateContent", _NAMESPACES):
        reading.drop("unsupported_content", None, "content for newer PowerPoint versions (e.g. 3D models, ink)")
