"""What the conversion host needs from a converter, and which files it converts.

The host is written against this protocol so its scheduling can be tested with
a fake engine whose completions a test controls; ``office.libreoffice`` is the
real one.
"""

import posixpath
from dataclasses import dataclass
from typing import Protocol

from office.exceptions import NotAnOfficeFile


@dataclass(frozen=True)
class OfficeFormat:
    import_filter: str
    export_filter: str


FORMATS: dict[str, OfficeFormat] = {
    ".docx": OfficeFormat("MS Word 2007 XML", "writer_pdf_Export"),
    ".xlsx": OfficeFormat("Calc MS Excel 2007 XML", "calc_pdf_Export"),
    ".pptx": OfficeFormat("Impress MS PowerPoint 2007 XML", "impress_pdf_Export"),
    ".odt": OfficeFormat("writer8", "writer_pdf_Export"),
    ".ods": OfficeFormat("calc8", "calc_pdf_Export"),
    ".odp": OfficeFormat("impress8", "impress_pdf_Export"),
}


def office_extension(path: str) -> str | None:
    """The lower-case Office extension of ``path`` (``".docx"``), or None when it has no preview."""
    extension = posixpath.splitext(path)[1].lower()
    return extension if extension in FORMATS else None


def office_extension_require(path: str) -> str:
    """Like ``office_extension`` but raises NotAnOfficeFile."""
    extension = office_extension(path)
    if extension is None:
        raise NotAnOfficeFile(details={"path": path, "extensions": sorted(FORMATS)})
    return extension


@dataclass(frozen=True)
class Conversion:
    pdf: bytes
    page_count: int


class Engine(Protocol):
    """Converts Office bytes to PDF; at most as many calls at once as the host's running limit."""

    @property
    def generation(self) -> int:
        """Bumped by every new converter lifetime; part of every cache identity."""
        ...

    async def convert(self, *, source: bytes, extension: str) -> Conversion:
        """Raises ConversionFailed, ConversionTimedOut, PdfTooLarge or ConverterUnavailable.

        A cancelled call returns only after the conversion has really stopped.
        """
        ...

    async def close(self) -> None: ...
