"""Builds a PPTX with a slide per rendered page, byte-for-byte reproducibly: the page's picture, and over it
(the editable export) the page's text as text boxes.

python-pptx stamps zip entries with the current time and leaves template core properties;
both are fixed here (entries dated 1980-01-01, properties from the project's source epoch),
so the same pages and epoch always give the same bytes.
"""

import io
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime

from pptx import Presentation

from quire_worker.processors.pptx.text_boxes import FontMapping, add_text_boxes

EMU_PER_POINT = 12700
EMU_PER_INCH = 914400
MIN_SLIDE_EMU = 1 * EMU_PER_INCH  # PowerPoint accepts slide sides from 1 to 56 inches
MAX_SLIDE_EMU = 56 * EMU_PER_INCH
BLANK_LAYOUT = 6  # "Blank" in python-pptx's default template
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class RenderedPage:
    png: bytes
    width_pt: float
    height_pt: float
    lines: tuple = ()  # page_text.TextLine: text boxes over the picture (which then holds what is not text)
    description: str = ""  # the picture's alt text; "Page N of <title>" when empty
    formulas: tuple = ()  # page_pictures.Formula: a picture each, its source as alt text

    @property
    def size(self) -> tuple[float, float]:
        return self.width_pt, self.height_pt


@dataclass(frozen=True)
class SlideSize:
    width_emu: int
    height_emu: int
    scaled: bool  # the page size was outside PowerPoint's range and was scaled (aspect kept if possible)


def slide_size_for(width_pt: float, height_pt: float) -> SlideSize:
    """The page size in EMU, scaled into PowerPoint's 1 to 56 inch range."""
    width, height = width_pt * EMU_PER_POINT, height_pt * EMU_PER_POINT
    scale = 1.0
    if max(width, height) > MAX_SLIDE_EMU:
        scale = MAX_SLIDE_EMU / max(width, height)
    elif min(width, height) < MIN_SLIDE_EMU:
        scale = MIN_SLIDE_EMU / min(width, height)
    fitted_width = min(max(round(width * scale), MIN_SLIDE_EMU), MAX_SLIDE_EMU)
    fitted_height = min(max(round(height * scale), MIN_SLIDE_EMU), MAX_SLIDE_EMU)
    return SlideSize(fitted_width, fitted_height, scaled=scale != 1.0)


def build_presentation(
    pages: list[RenderedPage], *, size: SlideSize, title: str, epoch: datetime, fonts: FontMapping | None = None
) -> bytes:
    presentation = Presentation()
    presentation.slide_width, presentation.slide_height = size.width_emu, size.height_emu
    layout = presentation.slide_layouts[BLANK_LAYOUT]
    fonts = fonts if fonts is not None else FontMapping()
    for number, page in enumerate(pages, start=1):
        slide = presentation.slides.add_slide(layout)
        left, top, width, height = _fitted(page, size)
        picture = slide.shapes.add_picture(io.BytesIO(page.png), left, top, width, height)
        picture.name = f"Page {number}"
        picture._element.nvPicPr.cNvPr.set("descr", page.description or f"Page {number} of {title}")
        scale = width / (page.width_pt * EMU_PER_POINT)
        for index, formula in enumerate(page.formulas, start=1):
            place = [round(value * scale * EMU_PER_POINT) for value in (formula.x, formula.y)]
            extent = [round(value * scale * EMU_PER_POINT) for value in (formula.width, formula.height)]
            shown = slide.shapes.add_picture(io.BytesIO(formula.png), left + place[0], top + place[1], *extent)
            shown.name = f"Formula {index}"
            shown._element.nvPicPr.cNvPr.set("descr", formula.source)
        if page.lines:
            add_text_boxes(slide, list(page.lines), scale=scale, offset=(left, top), fonts=fonts)
    _set_core_properties(presentation, title=title, epoch=epoch)
    raw = io.BytesIO()
    presentation.save(raw)
    return reproducible_zip(raw.getvalue())


def _fitted(page: RenderedPage, size: SlideSize) -> tuple[int, int, int, int]:
    """The page's picture, as large as fits the slide, centred (pages may differ in size)."""
    scale = min(size.width_emu / (page.width_pt * EMU_PER_POINT), size.height_emu / (page.height_pt * EMU_PER_POINT))
    width = round(page.width_pt * EMU_PER_POINT * scale)
    height = round(page.height_pt * EMU_PER_POINT * scale)
    return (size.width_emu - width) // 2, (size.height_emu - height) // 2, width, height


def _set_core_properties(presentation, *, title: str, epoch: datetime) -> None:
    properties = presentation.core_properties
    properties.title = title
    properties.author = properties.last_modified_by = "Quire"
    properties.revision = 1
    properties.created = properties.modified = epoch.astimezone(UTC).replace(tzinfo=None)
    properties.comments = properties.subject = properties.keywords = properties.category = ""


def reproducible_zip(package: bytes) -> bytes:
    """The same zip with fixed timestamps, attributes and compression (member order kept)."""
    output = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(package)) as source, zipfile.ZipFile(output, "w") as target:
        for entry in source.infolist():
            info = zipfile.ZipInfo(entry.filename, date_time=ZIP_EPOCH)
            info.create_system = 0
            info.external_attr = 0
            stored = entry.filename.lower().endswith((".png", ".jpeg", ".jpg"))
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            target.writestr(info, source.read(entry.filename), compresslevel=None if stored else 6)
    return output.getvalue()
