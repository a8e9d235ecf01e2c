"""Checking an uploaded PDF at the edge, before any byte is stored.

Refusals are cheap and specific: over the size limit (413 ``pdf_too_large``),
no ``%PDF-`` header (400 ``not_a_pdf``), a cross-reference table pypdf cannot
read (400 ``pdf_unreadable``), a password other than the empty one (400
``pdf_encrypted``), no pages (400 ``pdf_empty``). Text extraction, the
expensive and risky part, happens later in the worker's sandboxed child.
"""

import io
import logging
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.conf import settings

from library.exceptions import NotAPdf, PdfEmpty, PdfEncrypted, PdfTooLarge, PdfUnreadable
from library.services.documents import title_clean

logger = logging.getLogger(__name__)

HEADER_WINDOW = 1024  # PDF readers accept the header anywhere in the first kilobyte
MAX_FILENAME = 255


@dataclass(frozen=True)
class PdfFacts:
    page_count: int
    metadata_title: str | None


def max_pdf_bytes() -> int:
    return settings.LIBRARY_MAX_PDF_BYTES


def pdf_inspect(data: bytes) -> PdfFacts:
    """Page count and metadata title of a readable PDF, or the refusal that fits."""
    if len(data) > max_pdf_bytes():
        raise PdfTooLarge(details={"limit_bytes": max_pdf_bytes(), "size_bytes": len(data)})
    if b"%PDF-" not in data[:HEADER_WINDOW]:
        raise NotAPdf()
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise PdfEncrypted()
        pages = len(reader.pages)
        title = _metadata_title(reader)
    except (FileNotDecryptedError, DependencyError) as exc:  # DependencyError: AES needs a crypto library
        raise PdfEncrypted() from exc
    except PdfEncrypted:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, RecursionError) as exc:
        raise PdfUnreadable(details={"reason": type(exc).__name__}) from exc
    except NotImplementedError as exc:  # e.g. an encryption algorithm pypdf does not implement
        raise PdfEncrypted() from exc
    if pages < 1:
        raise PdfEmpty()
    return PdfFacts(page_count=pages, metadata_title=title)


def _metadata_title(reader) -> str | None:
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:  # metadata is a nicety: a damaged info dictionary must not refuse the PDF
        logger.info("PDF metadata unreadable")
        return None
    return str(title) if title else None


def filename_clean(raw: str | None) -> str:
    """The base name the client gave, printable and at most 255 characters ("" when none)."""
    name = PurePosixPath((raw or "").replace("\\", "/")).name
    return "".join(char for char in name if char.isprintable())[:MAX_FILENAME]


def title_choose(*, explicit: str | None, facts: PdfFacts, filename: str) -> str:
    """The title rule: the ``title`` parameter, else the PDF's metadata title, else the file name's stem."""
    for candidate in (explicit, facts.metadata_title, PurePosixPath(filename).stem if filename else None):
        if cleaned := title_clean(candidate):
            return cleaned
    return "Untitled PDF"
