"""Checks a PPTX's zip container before any parser expands it.

Core validated the OPC package at submission; this is the processor defending itself. Reading
a zip member never yields more than its declared size (``zipfile`` stops there), so bounding
the declared sizes bounds what python-pptx can expand.
"""

import re
import zipfile
from pathlib import Path

from quire_worker.processors.child_protocol import ConversionFailure
from quire_worker.processors.pptx.slide_model import ImportBounds

_SLIDE_PART = re.compile(r"ppt/slides/slide\d+\.xml")
_REQUIRED_PARTS = ("[Content_Types].xml", "ppt/presentation.xml")
_RATIO_CHECK_FROM_BYTES = 8 * 1024 * 1024


def invalid(code: str, message: str) -> ConversionFailure:
    return ConversionFailure("invalid_input", code, message)


def too_large(code: str, message: str) -> ConversionFailure:
    return ConversionFailure("resource_limit", code, message)


def guard_package(path: Path, bounds: ImportBounds) -> None:
    """Raise ConversionFailure unless ``path`` is a plausible, bounded PPTX zip."""
    if not path.is_file() or not zipfile.is_zipfile(path):
        raise invalid("not_a_zip", "The file is not a PPTX presentation (it is not a zip package).")
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as exc:
        raise invalid("corrupt_zip", f"The presentation's zip package is damaged: {exc}") from exc
    _check_entries(entries, bounds)
    names = {entry.filename for entry in entries}
    if len(names) != len(entries):
        raise invalid("duplicate_parts", "The presentation names the same part twice.")
    missing = [name for name in _REQUIRED_PARTS if name not in names]
    if missing:
        raise invalid("not_a_presentation", f"The package has no {missing[0]}; it is not a presentation.")
    slide_parts = sum(1 for name in names if _SLIDE_PART.fullmatch(name))
    if slide_parts > bounds.max_slides:
        raise too_large(
            "too_many_slides",
            f"The presentation has {slide_parts} slides; at most {bounds.max_slides} can be imported.",
        )


def _check_entries(entries: list[zipfile.ZipInfo], bounds: ImportBounds) -> None:
    if len(entries) > bounds.max_package_entries:
        raise too_large(
            "too_many_parts",
            f"The package has {len(entries)} parts; the limit is {bounds.max_package_entries}.",
        )
    expanded = 0
    for entry in entries:
        if entry.flag_bits & 0x1:
            raise invalid("encrypted", "The presentation is encrypted.")
        if entry.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise invalid("unsupported_compression", f"Part {entry.filename!r} uses an unsupported compression.")
        expanded += entry.file_size
        if entry.file_size >= _RATIO_CHECK_FROM_BYTES and (
            entry.file_size > bounds.max_compression_ratio * max(entry.compress_size, 1)
        ):
            raise too_large(
                "compression_ratio",
                f"Part {entry.filename!r} expands suspiciously ({entry.compress_size} → {entry.file_size} bytes).",
            )
    if expanded > bounds.max_expanded_bytes:
        raise too_large(
            "expanded_too_large",
            f"The presentation expands to {expanded} bytes; the limit is {bounds.max_expanded_bytes}.",
        )
