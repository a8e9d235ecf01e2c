"""Sandboxed child of ``typst.export.pptx/v1``: a ``project-bundle/v1`` → ``output.pptx`` + ``report.json``.

Run as ``python -m quire_worker.processors.typst.export_pptx_child --input IN --output OUT
--settings JSON`` (see ``child_protocol``). Settings: ``max_pages``, ``target_ppi``,
``max_page_pixels``.
"""

import json
import math
import os
import re
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime

import typst

from quire_worker.processors.child_protocol import ChildArguments, ConversionFailure, child_main
from quire_worker.processors.pptx.text_boxes import FontMapping
from quire_worker.processors.pptx.writing import RenderedPage, build_presentation, slide_size_for
from quire_worker.processors.typst.compilation import (
    compile_failure,
    deny_network,
    refuse_registry_packages,
    registry_packages,
    warning_entries,
)
from quire_worker.processors.typst.export_report import export_report
from quire_worker.processors.typst.page_pictures import page_pictures
from quire_worker.processors.typst.page_text import PageText, document_title, page_texts
from quire_worker.processors.typst.project import TypstProject, read_project

PPTX_NAME = "output.pptx"
REPORT_NAME = "report.json"
MIN_PPI = 24
_PDF_FONT = re.compile(rb"/BaseFont\s*/(?:[A-Z]{6}\+)?([A-Za-z0-9_.+-]+)")


@dataclass(frozen=True)
class ExportSettings:
    max_pages: int
    target_ppi: float
    max_page_pixels: int


def convert(arguments: ChildArguments) -> tuple[dict, ...]:
    settings = ExportSettings(**arguments.settings)
    project = read_project(arguments.input_dir)
    refuse_registry_packages(registry_packages(project.files_root, project.typst_paths))
    isolation = deny_network(arguments.scratch_dir)
    os.chdir(project.files_root)  # Typst shows diagnostic paths relative to the working directory
    compiler = typst.Compiler(
        str(project.entry_file),
        root=str(project.files_root),
        font_paths=[str(project.files_root)],
        ignore_system_fonts=True,
        package_path=str(isolation.packages),
        package_cache_path=str(isolation.cache),
    )
    rendering = _render(compiler, project, settings, scratch_dir=arguments.scratch_dir, isolation=isolation)
    size = slide_size_for(*rendering.pages[0].size)
    epoch = datetime.fromtimestamp(project.source_epoch, tz=UTC)
    fonts = FontMapping()
    pptx = build_presentation(rendering.pages, size=size, title=rendering.title, epoch=epoch, fonts=fonts)
    (arguments.output_dir / PPTX_NAME).write_bytes(pptx)
    report = export_report(project, rendering=rendering, size=size, settings=settings, fonts=fonts)
    (arguments.output_dir / REPORT_NAME).write_text(json.dumps(report, ensure_ascii=False, indent=2), "utf-8")
    return (*rendering.warnings, isolation.entry)


@dataclass(frozen=True)
class Rendering:
    pages: list[RenderedPage]
    ppi: float
    fonts: list[str]
    warnings: list[dict]
    texts: list[PageText]
    title: str


def _render(compiler, project: TypstProject, settings: ExportSettings, *, scratch_dir, isolation) -> Rendering:
    """Each page's text as lines, a PNG at a slide resolution of the rest without the formulas, and each
    formula's picture (``page_pictures``), with the fonts used and the compiler's warnings."""
    pdf, found_warnings = _compile(compiler, project, format="pdf")
    texts = page_texts(pdf[0])  # the pages' text, and their sizes
    title = document_title(pdf[0]) or project.title  # `#set document(title: …)`, else the entry file's name
    sizes = [(round(text.width, 2), round(text.height, 2)) for text in texts]
    if len(sizes) > settings.max_pages:
        raise ConversionFailure(
            "resource_limit",
            "too_many_pages",
            f"The project has {len(sizes)} pages; at most {settings.max_pages} can be exported.",
        )
    ppi = choose_ppi(sizes, settings)
    pictures = page_pictures(
        project.files_root,
        project.entry_path,
        scratch_dir=scratch_dir,
        isolation=isolation,
        ppi=ppi,
        page_widths=[width for width, _ in sizes],
    )
    if len(pictures.backgrounds) != len(sizes):
        raise ConversionFailure(
            "internal_contract_violation", "pages_differ", "The page pictures do not match the document's pages."
        )
    pages = []
    for number, (png, (width, height), text) in enumerate(zip(pictures.backgrounds, sizes, texts, strict=True), 1):
        formulas = tuple(formula for formula in pictures.formulas if formula.page == number)
        description = f"Page {number} of {title}: what is not text"
        pages.append(RenderedPage(png, width, height, lines=tuple(text.lines), description=description,
                                  formulas=formulas))  # fmt: skip
    warnings_found = warning_entries(found_warnings, project.files_root)
    return Rendering(pages=pages, ppi=ppi, fonts=fonts_in_pdf(pdf), warnings=warnings_found, texts=texts, title=title)


def _compile(compiler, project: TypstProject, **options) -> tuple[list[bytes], list]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            output, found = compiler.compile_with_warnings(timestamp=project.source_epoch, **options)
    except typst.TypstError as exc:
        raise compile_failure(exc, project.files_root) from exc
    return (output if isinstance(output, list) else [output]), list(found)


def choose_ppi(sizes: list[tuple[float, float]], settings: ExportSettings) -> float:
    """``target_ppi``, lowered only as far as keeps the largest page within ``max_page_pixels``."""
    largest_square_inches = max(width * height for width, height in sizes) / (72 * 72)
    # Typst rounds pixel sizes up; the 0.5 % margin keeps the product under the budget all the same.
    ceiling = 0.995 * math.sqrt(settings.max_page_pixels / max(largest_square_inches, 1e-9))
    ppi = math.floor(min(settings.target_ppi, ceiling) * 100) / 100
    if ppi < MIN_PPI:
        raise ConversionFailure(
            "resource_limit",
            "page_too_large",
            "A page is too large to render as a slide picture within the pixel limit.",
        )
    return ppi


def fonts_in_pdf(pdf: list[bytes]) -> list[str]:
    """PostScript names of the fonts the compiled document embeds (subset tags removed)."""
    found = _PDF_FONT.findall(pdf[0] if pdf else b"")
    return sorted({name.decode("ascii").removesuffix("-Identity-H") for name in found})


if __name__ == "__main__":
    raise SystemExit(child_main(convert))
