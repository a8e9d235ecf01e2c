"""PDFs for the library tests, made here: text pages (Helvetica), encrypted, damaged."""

import io

from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _font() -> DictionaryObject:
    return DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )


def text_pdf(pages: list[str], *, title: str | None = None) -> bytes:
    """One page per string; each line of a string is a line of text on its page."""
    writer = PdfWriter()
    font = writer._add_object(_font())
    for text in pages:
        page = writer.add_blank_page(width=612, height=792)
        lines = " T* ".join(f"({_escaped(line)}) Tj" for line in text.splitlines() or [""])
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 11 Tf 14 TL 72 720 Td {lines} ET".encode("latin-1", "replace"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {
                NameObject("/Font"): DictionaryObject({NameObject("/F1"): font}),
            }
        )
    if title:
        writer.add_metadata({"/Title": title})
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def encrypted_pdf() -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(text_pdf(["secret page"])))
    writer.encrypt(user_password="open sesame", owner_password="owner", algorithm="RC4-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def damaged_pdf() -> bytes:
    """A PDF header followed by nothing a reader can use."""
    return b"%PDF-1.7\n" + b"\x00garbage\n" * 50 + b"%%EOF\n"
