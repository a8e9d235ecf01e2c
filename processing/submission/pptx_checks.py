"""``pptx-input/v1``: an uploaded presentation, validated as an OPC package before anything is reserved.

Checks use the zip central directory and small XML parts only (parsed with
defusedxml, so entity expansion and external DTDs are refused); no entry is
decompressed beyond the two relationship/content-type parts.
"""

import io
import posixpath
import zipfile
import zlib
from dataclasses import dataclass

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from processing.exceptions import InvalidInput

MAX_ENTRIES = 5000
MAX_EXPANDED_BYTES = 512 * 1024 * 1024
MAX_RATIO = 100
RATIO_CHECK_FROM_BYTES = 1024 * 1024
# The package as a whole: many small, well-compressed parts (each under the per-part check) add up. A real deck's
# XML compresses perhaps 20×, its pictures not at all; a package expanding 100× its upload is a bomb.
MAX_PACKAGE_RATIO = 100
PACKAGE_RATIO_CHECK_FROM_BYTES = 16 * 1024 * 1024
MAX_XML_PART_BYTES = 2 * 1024 * 1024

PRESENTATION_TYPES = {
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml",
}
OFFICE_DOCUMENT_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
CT_NS = "{http://schemas.openxmlformats.org/package/2006/content-types}"
REL_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"


class InvalidPresentation(InvalidInput):
    """The upload is not a PowerPoint presentation Quire can import."""

    code = "invalid_pptx"


@dataclass(frozen=True)
class PresentationCheck:
    entries: int
    expanded_bytes: int
    presentation_part: str


def _refuse(code: str, message: str, **details) -> InvalidPresentation:
    error = InvalidPresentation(message, details=details)
    error.code = code
    return error


def _entry_names_safe(infos: list[zipfile.ZipInfo]) -> None:
    for info in infos:
        name = info.filename
        parts = name.split("/")
        if name.startswith(("/", "\\")) or "\\" in name or ".." in parts or (len(name) > 1 and name[1] == ":"):
            raise _refuse("pptx_unsafe_entry_name", "The package names a file outside itself.", entry=name[:200])


def _sizes_bounded(infos: list[zipfile.ZipInfo], upload_bytes: int) -> int:
    if len(infos) > MAX_ENTRIES:
        raise _refuse("pptx_too_many_entries", "The package has too many parts.", limit=MAX_ENTRIES)
    expanded = sum(info.file_size for info in infos)
    if expanded > MAX_EXPANDED_BYTES:
        raise _refuse("pptx_too_large_expanded", "The package expands beyond the size limit.", limit=MAX_EXPANDED_BYTES)
    for info in infos:
        if info.file_size >= RATIO_CHECK_FROM_BYTES and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            raise _refuse(
                "pptx_compression_ratio", "A part is compressed suspiciously well.", entry=info.filename[:200]
            )
    if expanded >= PACKAGE_RATIO_CHECK_FROM_BYTES and expanded > MAX_PACKAGE_RATIO * max(upload_bytes, 1):
        raise _refuse(
            "pptx_compression_ratio",
            "The package expands suspiciously far beyond its size.",
            expanded_bytes=expanded,
            limit_ratio=MAX_PACKAGE_RATIO,
        )
    return expanded


def _xml(archive: zipfile.ZipFile, name: str):
    info = archive.getinfo(name)
    if info.file_size > MAX_XML_PART_BYTES:
        raise _refuse("pptx_invalid_xml", f"{name} is too large.", entry=name)
    try:
        return ElementTree.fromstring(archive.read(name))
    # A damaged or encrypted entry fails while reading: bad CRC, corrupt deflate data, unsupported method.
    except (
        ElementTree.ParseError,
        DefusedXmlException,
        ValueError,
        zipfile.BadZipFile,
        zlib.error,
        RuntimeError,
        NotImplementedError,
        EOFError,
    ) as exc:
        raise _refuse("pptx_invalid_xml", f"{name} is not acceptable XML.", entry=name) from exc


def _presentation_part(archive: zipfile.ZipFile, names: set[str]) -> str:
    if "[Content_Types].xml" not in names:
        raise _refuse("pptx_missing_content_types", "The package has no [Content_Types].xml.")
    if "_rels/.rels" not in names:
        raise _refuse("pptx_missing_presentation", "The package has no relationships part.")
    overrides = {
        item.get("PartName", "").lstrip("/"): item.get("ContentType", "")
        for item in _xml(archive, "[Content_Types].xml").iter(f"{CT_NS}Override")
    }
    for relationship in _xml(archive, "_rels/.rels").iter(f"{REL_NS}Relationship"):
        if relationship.get("Type") == OFFICE_DOCUMENT_REL:
            target = posixpath.normpath(relationship.get("Target", "").lstrip("/"))
            if target in names and overrides.get(target) in PRESENTATION_TYPES:
                return target
    raise _refuse("pptx_missing_presentation", "The package is not a presentation.")


def presentation_check(data: bytes) -> PresentationCheck:
    """Validate an uploaded PPTX; raise InvalidPresentation with a specific ``code``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        raise _refuse("pptx_not_a_zip", "The upload is not a PPTX (not a zip package).") from exc
    with archive:
        infos = archive.infolist()
        _entry_names_safe(infos)
        expanded = _sizes_bounded(infos, len(data))
        names = {info.filename for info in infos}
        if len(names) != len(infos):
            raise _refuse("pptx_unsafe_entry_name", "The package names one part twice.")
        part = _presentation_part(archive, names)
    return PresentationCheck(entries=len(infos), expanded_bytes=expanded, presentation_part=part)
