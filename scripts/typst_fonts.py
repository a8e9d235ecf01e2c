"""Typst's default fonts as files, for the browser's live preview: ``python -m scripts.typst_fonts [DIR]``.

The worker compiles with the fonts embedded in the pinned ``typst`` wheel (and the project's own); the preview's
typst.ts compiler embeds none. So that a page breaks at the same place in both, the preview must load those very
font files. No registry ships them as files, so they are copied out of the wheel's extension module, where the
Rust build placed each font's bytes unchanged (``include_bytes!`` of typst-assets): every sfnt in it is found by
its table directory, checked, and written under its PostScript name with typst-assets' file name
(``LibertinusSerif-Regular.otf``). The default directory, ``static/bundles/typst-fonts``, is served as static files
beside the preview's bundle. `make bundle` runs this when the directory is missing or older than the wheel.

Exits non-zero when the fonts found are not exactly the ones the ``typst`` package reports as embedded.
"""

import struct
import sys
from pathlib import Path

import typst

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DIR = ROOT / "static" / "bundles" / "typst-fonts"
_SFNT_VERSIONS = (b"\x00\x01\x00\x00", b"OTTO")
_HEAD_MAGIC = 0x5F0F3CF5
_POSTSCRIPT_NAME = 6


def embedded_fonts(module_bytes: bytes) -> dict[str, bytes]:
    """Every complete font file inside ``module_bytes``, by file name (PostScript name + extension)."""
    fonts = {}
    for version in _SFNT_VERSIONS:
        start = module_bytes.find(version)
        while start != -1:
            font = _font_at(module_bytes, start)
            if font is not None:
                extension = ".otf" if version == b"OTTO" else ".ttf"
                fonts[_postscript_name(font) + extension] = font
            start = module_bytes.find(version, start + 1)
    return fonts


def _font_at(data: bytes, start: int) -> bytes | None:
    """The font whose table directory starts at ``start``, or None when those bytes are not one."""
    if start + 12 > len(data):
        return None
    num_tables, search_range = struct.unpack_from(">HH", data, start + 4)
    # OpenType's header: searchRange is 16 × the largest power of two ≤ numTables; random bytes rarely agree.
    if not 4 <= num_tables <= 64 or search_range != 16 * (1 << (num_tables.bit_length() - 1)):
        return None
    tables, end = {}, 0
    for index in range(num_tables):
        tag, _checksum, offset, length = struct.unpack_from(">4sIII", data, start + 12 + 16 * index)
        tables[tag] = (offset, length)
        end = max(end, offset + length)
    if b"head" not in tables or b"name" not in tables or start + end > len(data):
        return None
    head_offset = tables[b"head"][0]
    if struct.unpack_from(">I", data, start + head_offset + 12)[0] != _HEAD_MAGIC:
        return None
    return data[start : start + end]


def _postscript_name(font: bytes) -> str:
    """The font's PostScript name (name ID 6), read from its ``name`` table."""
    num_tables = struct.unpack_from(">H", font, 4)[0]
    for index in range(num_tables):
        tag, _checksum, offset, _length = struct.unpack_from(">4sIII", font, 12 + 16 * index)
        if tag == b"name":
            break
    _format, count, strings = struct.unpack_from(">HHH", font, offset)
    for record in range(count):
        platform, _encoding, _language, name_id, length, at = struct.unpack_from(">6H", font, offset + 6 + 12 * record)
        if name_id == _POSTSCRIPT_NAME:
            raw = font[offset + strings + at : offset + strings + at + length]
            return raw.decode("utf-16-be" if platform in (0, 3) else "latin-1")
    raise ValueError("a font without a PostScript name")


def _described(fonts: list) -> list[tuple]:
    return sorted((font.family, font.style, font.weight) for font in fonts)


def install(target: Path) -> list[str]:
    """Write the embedded fonts into ``target``; return their file names. Raises ``RuntimeError`` when the files
    found do not describe exactly the fonts the ``typst`` package embeds."""
    fonts = embedded_fonts(Path(typst._typst.__file__).read_bytes())
    target.mkdir(parents=True, exist_ok=True)
    for name, font in fonts.items():
        (target / name).write_bytes(font)
    written = typst.Fonts(include_system_fonts=False, include_embedded_fonts=False, font_paths=[str(target)])
    embedded = typst.Fonts(include_system_fonts=False, include_embedded_fonts=True)
    if _described(written.fonts()) != _described(embedded.fonts()):
        raise RuntimeError(f"the fonts copied to {target} are not the {len(embedded.fonts())} the typst package embeds")
    return sorted(fonts)


if __name__ == "__main__":
    directory = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR
    names = install(directory)
    print(f"{len(names)} Typst fonts in {directory}")
