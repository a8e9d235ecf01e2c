"""Presentations generated for the PPTX import tests (python-pptx), good and hostile."""

import hashlib
import io
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass

from PIL import Image
from pptx import Presentation
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches, Pt

TITLE_LAYOUT, BULLETS_LAYOUT, TITLE_ONLY_LAYOUT, BLANK_LAYOUT = 0, 1, 5, 6


@dataclass(frozen=True)
class SlideFacts:
    title: str
    texts: tuple[str, ...]  # every other piece of text the slide shows


def picture_png(width: int = 120, height: int = 80) -> bytes:
    """A small, deterministic gradient picture."""
    image = Image.new("RGB", (width, height))
    image.putdata([(x * 2 % 256, y * 3 % 256, 128) for y in range(height) for x in range(width)])
    output = io.BytesIO()
    image.save(output, format="PNG")
    return output.getvalue()


def widescreen_presentation():
    presentation = Presentation()
    presentation.slide_width, presentation.slide_height = Inches(13.333), Inches(7.5)
    return presentation


AGENDA_BULLETS = [
    (0, "Revenue up 12%"),
    (1, "EMEA [best] region"),
    (1, "APAC_growth of $5M"),
    (0, "Hiring plan"),
    (1, "Engineers @ twice the rate"),
]
TABLE_ROWS = [("Region", "Q1", "Q2"), ("North", "10", "12"), ("South", "7", "9")]


def five_slide_deck(picture: bytes) -> tuple[bytes, list[SlideFacts]]:
    """Titles, two-level bullets, a table, a picture, a chart, notes, and markup-hostile text."""
    presentation = widescreen_presentation()
    _add_cover(presentation)
    _add_agenda(presentation)
    _add_numbers(presentation)
    _add_team_photo(presentation, picture)
    _add_outlook(presentation)
    facts = [
        SlideFacts("Quarterly Review #3", ("Prepared for *all* teams & $partners",)),
        SlideFacts("Agenda", tuple(text for _, text in AGENDA_BULLETS)),
        SlideFacts("Numbers", ("Region", "Q1", "Q2", "North", "South")),
        SlideFacts("Team photo", ()),
        SlideFacts("Outlook", ("Thanks!", "example.com/next")),
    ]
    return saved(presentation), facts


def _titled_slide(presentation, layout: int, title: str):
    slide = presentation.slides.add_slide(presentation.slide_layouts[layout])
    slide.shapes.title.text = title
    return slide


def _add_cover(presentation) -> None:
    cover = _titled_slide(presentation, TITLE_LAYOUT, "Quarterly Review #3")
    cover.placeholders[1].text = "Prepared for *all* teams & $partners"


def _add_agenda(presentation) -> None:
    agenda = _titled_slide(presentation, BULLETS_LAYOUT, "Agenda")
    _bullets(agenda.placeholders[1].text_frame, AGENDA_BULLETS)
    agenda.notes_slide.notes_text_frame.text = "Mention the <targets> // carefully\nthen pause"


def _add_numbers(presentation) -> None:
    numbers = _titled_slide(presentation, TITLE_ONLY_LAYOUT, "Numbers")
    table = numbers.shapes.add_table(3, 3, Inches(1), Inches(2), Inches(9), Inches(2)).table
    for row, values in enumerate(TABLE_ROWS):
        for column, value in enumerate(values):
            table.cell(row, column).text = value


def _add_team_photo(presentation, picture: bytes) -> None:
    team = _titled_slide(presentation, TITLE_ONLY_LAYOUT, "Team photo")
    team.shapes.add_picture(io.BytesIO(picture), Inches(4), Inches(2), Inches(4.5), Inches(3))
    team.notes_slide.notes_text_frame.text = "Everyone joined in March"


def _add_outlook(presentation) -> None:
    outlook = _titled_slide(presentation, TITLE_ONLY_LAYOUT, "Outlook")
    chart_data = CategoryChartData()
    chart_data.categories = ["Q3", "Q4"]
    chart_data.add_series("Forecast", (14, 17))
    chart_type = XL_CHART_TYPE.COLUMN_CLUSTERED
    outlook.shapes.add_chart(chart_type, Inches(1), Inches(2), Inches(6), Inches(4), chart_data)
    closing = outlook.shapes.add_textbox(Inches(8), Inches(3), Inches(4), Inches(1)).text_frame
    run = closing.paragraphs[0].add_run()
    run.text, run.font.bold, run.font.size = "Thanks!", True, Pt(28)
    link = closing.add_paragraph().add_run()
    link.text = "example.com/next"
    link.hyperlink.address = "https://example.com/next"


def _bullets(text_frame, items: list[tuple[int, str]]) -> None:
    text_frame.text = items[0][1]
    for level, text in items[1:]:
        paragraph = text_frame.add_paragraph()
        paragraph.text, paragraph.level = text, level


def saved(presentation) -> bytes:
    output = io.BytesIO()
    presentation.save(output)
    return output.getvalue()


def deck_with_picture(picture: bytes) -> bytes:
    presentation = widescreen_presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[BLANK_LAYOUT])
    pillow_limit, Image.MAX_IMAGE_PIXELS = (
        Image.MAX_IMAGE_PIXELS,
        None,
    )  # python-pptx asks Pillow for the size
    try:
        slide.shapes.add_picture(io.BytesIO(picture), Inches(1), Inches(1), Inches(4), Inches(3))
    finally:
        Image.MAX_IMAGE_PIXELS = pillow_limit
    return saved(presentation)


def png_claiming_size(width: int, height: int) -> bytes:
    """A tiny PNG whose header claims ``width`` x ``height`` pixels (a decompression-bomb picture)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00" * 64)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def noise_png(side: int) -> bytes:
    """A PNG that does not compress: about 3 x side² bytes."""
    size = side * side * 3
    noise = b"".join(hashlib.sha256(block.to_bytes(4, "big")).digest() for block in range(size // 32 + 1))
    image = Image.frombytes("RGB", (side, side), noise[:size])
    output = io.BytesIO()
    image.save(output, format="PNG")
    return output.getvalue()


def deck_with_nested_groups(depth: int) -> bytes:
    presentation = widescreen_presentation()
    shapes = presentation.slides.add_slide(presentation.slide_layouts[BLANK_LAYOUT]).shapes
    for _ in range(depth):
        shapes = shapes.add_group_shape().shapes
    shapes.add_textbox(Inches(1), Inches(1), Inches(2), Inches(1)).text_frame.text = "deep inside"
    return saved(presentation)


def deck_with_slides(count: int) -> bytes:
    """A real deck of ``count`` blank slides, made by copying one slide part (python-pptx is slow at this)."""
    presentation = widescreen_presentation()
    presentation.slides.add_slide(presentation.slide_layouts[BLANK_LAYOUT])
    with zipfile.ZipFile(io.BytesIO(saved(presentation))) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    slide, slide_rels = parts["ppt/slides/slide1.xml"], parts["ppt/slides/_rels/slide1.xml.rels"]
    overrides, relationships, slide_ids = [], [], []
    for number in range(2, count + 1):
        parts[f"ppt/slides/slide{number}.xml"] = slide
        parts[f"ppt/slides/_rels/slide{number}.xml.rels"] = slide_rels
        overrides.append(
            f'<Override PartName="/ppt/slides/slide{number}.xml" ContentType="application/'
            f'vnd.openxmlformats-officedocument.presentationml.slide+xml"/>'
        )
        relationships.append(
            f'<Relationship Id="rIdCopy{number}" Type="http://schemas.openxmlformats.org/'
            f'officeDocument/2006/relationships/slide" Target="slides/slide{number}.xml"/>'
        )
        slide_ids.append(f'<p:sldId id="{1000 + number}" r:id="rIdCopy{number}"/>')
    _insert_before(parts, "[Content_Types].xml", "</Types>", "".join(overrides))
    _insert_before(parts, "ppt/_rels/presentation.xml.rels", "</Relationships>", "".join(relationships))
    _insert_before(parts, "ppt/presentation.xml", "</p:sldIdLst>", "".join(slide_ids))
    return _zipped(parts)


def _insert_before(parts: dict[str, bytes], name: str, marker: str, addition: str) -> None:
    text = parts[name].decode("utf-8")
    assert marker in text, f"{marker} not in {name}"
    parts[name] = re.sub(re.escape(marker), lambda _: addition + marker, text, count=1).encode("utf-8")


def _zipped(parts: dict[str, bytes]) -> bytes:
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return output.getvalue()


def deck_with_zip_bomb(bomb_bytes: int) -> bytes:
    """A valid deck carrying one extra part of ``bomb_bytes`` zeros (deflates about a thousandfold)."""
    output = io.BytesIO(deck_with_nested_groups(0))
    with (
        zipfile.ZipFile(output, "a", zipfile.ZIP_DEFLATED) as archive,
        archive.open("ppt/media/bomb.bin", "w") as bomb,
    ):
        chunk = b"\x00" * (1024 * 1024)
        for _ in range(bomb_bytes // len(chunk)):
            bomb.write(chunk)
    return output.getvalue()


def deck_with_broken_slide() -> bytes:
    """A zip with the right part names whose presentation part is not XML."""
    with zipfile.ZipFile(io.BytesIO(deck_with_nested_groups(0))) as source:
        parts = {name: source.read(name) for name in source.namelist()}
    parts["ppt/presentation.xml"] = b"<p:presentation this is not xml"
    return _zipped(parts)
