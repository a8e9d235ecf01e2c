"""Small Office documents made on the spot (python-docx, openpyxl, python-pptx) and PDF text."""

import io

from docx import Document
from openpyxl import Workbook
from pptx import Presentation
from pptx.util import Inches
from pypdf import PdfReader


def docx_with(words: list[str], *, paragraphs: int = 1) -> bytes:
    document = Document()
    document.add_heading(" ".join(words), level=1)
    for number in range(paragraphs):
        document.add_paragraph(f"Paragraph {number}: " + " ".join(words))
    return _saved(document)


def xlsx_with(words: list[str]) -> bytes:
    workbook = Workbook()
    sheet = workbook.active
    for row, word in enumerate(words, start=1):
        sheet.cell(row=row, column=1, value=word)
        sheet.cell(row=row, column=2, value=row * 10)
    return _saved(workbook)


def pptx_with(words: list[str], *, slides: int = 1) -> bytes:
    presentation = Presentation()
    for number in range(slides):
        slide = presentation.slides.add_slide(presentation.slide_layouts[5])
        slide.shapes.title.text = f"Slide {number + 1}"
        box = slide.shapes.add_textbox(Inches(1), Inches(2), Inches(8), Inches(2))
        box.text_frame.text = " ".join(words)
    return _saved(presentation)


def pdf_text(pdf: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


def _saved(document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()
