"""Unpacked ``project-bundle/v1`` inputs, laid out as the agent leaves them for a processor."""

import hashlib
import io
import json
import struct
import zlib
from pathlib import Path

import pypdf

from workspace.starters import LATEX_MAIN

SOURCE_EPOCH = 1_700_000_000


def write_project_bundle(
    input_dir: Path,
    files: dict[str, str | bytes],
    *,
    entry_path: str = "main.tex",
    compiler: str = "pdflatex",
    listed_paths: list[str] | None = None,
) -> Path:
    """Write ``manifest.json`` and ``files/`` into ``input_dir`` and return it."""
    records = []
    for path, content in sorted(files.items()):
        data = content.encode() if isinstance(content, str) else content
        target = input_dir / "files" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        records.append({"path": path, "kind": _kind(path), "length": len(data), "sha256": _sha256(data)})
    if listed_paths is not None:
        records = [record for record in records if record["path"] in listed_paths]
    manifest = {
        "schema": "project-bundle/v1",
        "project_type": "latex",
        "entry_path": entry_path,
        "settings": {"compiler": compiler},
        "workspace_version": 1,
        "content_generation": 1,
        "source_epoch": SOURCE_EPOCH,
        "files": records,
    }
    (input_dir / "manifest.json").write_text(json.dumps(manifest, sort_keys=True))
    return input_dir


def tiny_png(width: int = 4, height: int = 4, rgb: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    """A valid RGB PNG of one colour, built by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def article(body: str, *, preamble: str = "") -> str:
    """A LaTeX article whose document body (and optional preamble) are the given lines."""
    return f"\\documentclass{{article}}\n{preamble}\\begin{{document}}\n{body}\n\\end{{document}}\n"


def pdf_text(path: Path) -> str:
    reader = pypdf.PdfReader(io.BytesIO(path.read_bytes()))
    return "\n".join(page.extract_text() for page in reader.pages)


def pdf_page_texts(path: Path) -> list[str]:
    return [page.extract_text() for page in pypdf.PdfReader(io.BytesIO(path.read_bytes())).pages]


def sha256_of(path: Path) -> str:
    return _sha256(path.read_bytes())


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _kind(path: str) -> str:
    return "document" if path.endswith((".tex", ".bib", ".sty", ".cls")) else "asset"


STARTER_DOCUMENT = LATEX_MAIN  # the demo project every new LaTeX project starts from
