"""The faithful profile: each slide rendered by LibreOffice as a background image.

The background shows only what did not become editable Typst (masters, themes, charts,
SmartArt, drawings…): converted pictures and tables are removed and converted text is
cleared in a copy of the deck before LibreOffice renders it to PDF. Typst then rasterizes
each PDF page to PNG, so no other PDF tool is needed.
"""

import subprocess
from pathlib import Path

import typst
from lxml import etree

from quire_worker.processors.child_protocol import ConversionFailure
from quire_worker.processors.pptx.reading import ConvertedElement
from quire_worker.processors.pptx.slide_model import Deck
from quire_worker.processors.typst.markup import points, string_literal

BACKGROUND_PIXEL_WIDTH = 1920  # a full-HD projector's width: sharp behind text, modest in size
_DRAWINGML_PARAGRAPH = "{http://schemas.openxmlformats.org/drawingml/2006/main}p"


def render_backgrounds(
    presentation,
    converted: list[ConvertedElement],
    *,
    deck: Deck,
    scratch_dir: Path,
    soffice: str,
    timeout_seconds: float,
) -> list[bytes]:
    """One PNG per slide, in slide order; raise ConversionFailure if LibreOffice cannot render."""
    _strip_converted(converted)
    for slide in presentation.slides:
        slide._element.attrib.pop("show", None)  # render hidden slides too: they are imported as well
    deck_path = scratch_dir / "background.pptx"
    presentation.save(deck_path)
    pdf_path = _render_pdf(deck_path, scratch_dir=scratch_dir, soffice=soffice, timeout_seconds=timeout_seconds)
    pages = _rasterize(pdf_path, deck=deck, scratch_dir=scratch_dir)
    if len(pages) != len(deck.slides):
        raise ConversionFailure(
            "processor_rejected",
            "slide_rendering_incomplete",
            f"LibreOffice rendered {len(pages)} of {len(deck.slides)} slides.",
        )
    return pages


def _strip_converted(converted: list[ConvertedElement]) -> None:
    for item in converted:
        element = item.element
        if item.treatment == "remove":
            parent = element.getparent()
            if parent is not None:
                parent.remove(element)
        elif item.treatment == "clear_text":
            body = element.find("{*}txBody")
            if body is not None:
                for paragraph in body.findall(_DRAWINGML_PARAGRAPH):
                    body.remove(paragraph)
                etree.SubElement(body, _DRAWINGML_PARAGRAPH)


def _render_pdf(deck_path: Path, *, scratch_dir: Path, soffice: str, timeout_seconds: float) -> Path:
    output_dir = scratch_dir / "rendered"
    argv = [
        soffice,
        "--headless",
        "--norestore",
        "--nolockcheck",
        "--nodefault",
        f"-env:UserInstallation={(scratch_dir / 'libreoffice-profile').as_uri()}",
        "--convert-to",
        "pdf",
        "--outdir",
        str(output_dir),
        str(deck_path),
    ]
    try:
        completed = subprocess.run(  # noqa: S603 - soffice is the configured LibreOffice, argv is ours
            argv, capture_output=True, timeout=timeout_seconds, check=False, cwd=scratch_dir
        )
    except subprocess.TimeoutExpired as exc:
        raise ConversionFailure(
            "resource_limit", "slide_rendering_timed_out", "LibreOffice did not render the slides in time."
        ) from exc
    except OSError as exc:
        raise ConversionFailure(
            "unsupported_dependency", "libreoffice_missing", f"LibreOffice could not be started: {exc}"
        ) from exc
    pdf_path = output_dir / (deck_path.stem + ".pdf")
    if not pdf_path.is_file():
        detail = completed.stderr.decode("utf-8", errors="replace")[-500:]
        raise ConversionFailure(
            "processor_rejected",
            "slide_rendering_failed",
            f"LibreOffice could not render the slides: {detail}",
        )
    return pdf_path


def _rasterize(pdf_path: Path, *, deck: Deck, scratch_dir: Path) -> list[bytes]:
    source = [f"#set page(width: {points(deck.width)}, height: {points(deck.height)}, margin: 0pt)"]
    pdf_name = string_literal(pdf_path.name)
    for number in range(1, len(deck.slides) + 1):
        source.append(f"#page(image({pdf_name}, page: {number}, width: 100%, height: 100%))")
    page_source = pdf_path.parent / "backgrounds.typ"
    page_source.write_text("\n".join(source) + "\n", encoding="utf-8")
    ppi = BACKGROUND_PIXEL_WIDTH / (deck.width / 72)
    try:
        pages = typst.compile(
            str(page_source), root=str(pdf_path.parent), format="png", ppi=ppi, ignore_system_fonts=True
        )
    except typst.TypstError as exc:
        raise ConversionFailure(
            "processor_rejected",
            "slide_rendering_failed",
            f"The rendered slides could not be rasterized: {exc.message}",
        ) from exc
    return pages if isinstance(pages, list) else [pages]
