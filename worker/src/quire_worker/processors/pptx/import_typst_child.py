"""Sandboxed child of ``pptx.import.typst/v1``: ``input.pptx`` → ``bundle.tar`` + ``report.json``.

Run as ``python -m quire_worker.processors.pptx.import_typst_child --input IN --output OUT
--settings JSON`` (see ``child_protocol``). Settings: ``input_profile``, ``filename``,
``bounds`` (``ImportBounds``), and for the faithful profile ``soffice`` and
``render_timeout_seconds``.
"""

import json
import warnings
from dataclasses import replace
from pathlib import Path

import typst
from pptx import Presentation

from quire_worker.processors.child_protocol import (
    ChildArguments,
    ConversionFailure,
    child_main,
    diagnostic_entry,
)
from quire_worker.processors.pptx.fonts import FontMapper
from quire_worker.processors.pptx.import_report import import_report
from quire_worker.processors.pptx.package_guard import guard_package
from quire_worker.processors.pptx.pictures import AssetStore
from quire_worker.processors.pptx.reading import read_deck
from quire_worker.processors.pptx.slide_model import ConversionReport, Deck, ImportBounds
from quire_worker.processors.typst.slides import deck_source
from quire_worker.processors.workspace_bundle import BundleFile, WorkspaceBundle, bundle_bytes

INPUT_NAME = "input.pptx"
BUNDLE_NAME = "bundle.tar"
REPORT_NAME = "report.json"
ENTRY_PATH = "main.typ"


def convert(arguments: ChildArguments) -> tuple[dict, ...]:
    settings = arguments.settings
    bounds = ImportBounds.from_settings(settings.get("bounds", {}))
    profile, source_name = settings["input_profile"], settings["filename"]
    guard_package(arguments.input_dir / INPUT_NAME, bounds)
    presentation = _open(arguments.input_dir / INPUT_NAME)
    report, assets, converted, fonts = ConversionReport(), AssetStore(bounds), [], FontMapper()
    deck = _read(
        presentation,
        bounds=bounds,
        report=report,
        assets=assets,
        converted=converted,
        fonts=fonts,
        faithful=profile == "faithful",
    )
    for detail in fonts.substitutions.values():
        report.approximated("font", slide=0, shape="", detail=detail)
    if profile == "faithful" and deck.slides:  # a deck without slides has nothing for LibreOffice to render
        deck = _with_backgrounds(deck, presentation, converted, arguments=arguments, assets=assets)
    elif _has_master_design(presentation):
        detail = "backgrounds and decorations of the slide master and layouts"
        report.dropped("master_design", slide=0, shape="", detail=detail)
    source_text = deck_source(deck, source_name=source_name, profile=profile).encode("utf-8")
    _check_source_size(source_text, bounds)
    files = (
        BundleFile(ENTRY_PATH, "text", source_text),
        *(BundleFile(path, "asset", data) for path, data in assets.files.items()),
        *(BundleFile(path, "asset", data) for path, data in fonts.files().items()),
    )
    compile_warnings = _compile_check(files, arguments.scratch_dir)
    bundle = WorkspaceBundle("typst", _suggested_name(source_name), ENTRY_PATH, files)
    (arguments.output_dir / BUNDLE_NAME).write_bytes(bundle_bytes(bundle))
    document = import_report(
        deck,
        report=report,
        bundle=bundle,
        profile=profile,
        source_name=source_name,
        compile_warnings=compile_warnings,
    )
    (arguments.output_dir / REPORT_NAME).write_text(json.dumps(document, ensure_ascii=False, indent=2), "utf-8")
    return tuple(diagnostic_entry(message, severity="warning") for message in compile_warnings)


def _check_source_size(source_text: bytes, bounds: ImportBounds) -> None:
    if len(source_text) > bounds.max_main_typ_bytes:
        raise ConversionFailure(
            "resource_limit",
            "main_typ_too_large",
            f"The converted text ({len(source_text)} bytes) is larger than a project "
            f"file may be ({bounds.max_main_typ_bytes} bytes).",
        )


def _open(source: Path):
    try:
        return Presentation(str(source))
    except MemoryError:
        raise
    except Exception as exc:  # python-pptx raises many kinds of errors on a damaged package
        raise ConversionFailure(
            "invalid_input",
            "unreadable_presentation",
            f"The presentation could not be read ({type(exc).__name__}: {exc}).",
        ) from exc


def _read(presentation, **reading) -> Deck:
    try:
        return read_deck(presentation, **reading)
    except (ConversionFailure, MemoryError):
        raise
    except Exception as exc:  # a part python-pptx cannot make sense of: the input is at fault
        raise ConversionFailure(
            "invalid_input",
            "unreadable_presentation",
            f"A slide could not be read ({type(exc).__name__}: {exc}).",
        ) from exc


def _with_backgrounds(deck: Deck, presentation, converted, *, arguments: ChildArguments, assets) -> Deck:
    from quire_worker.processors.pptx.slide_backgrounds import render_backgrounds

    settings = arguments.settings
    pages = render_backgrounds(
        presentation,
        converted,
        deck=deck,
        scratch_dir=arguments.scratch_dir,
        soffice=settings["soffice"],
        timeout_seconds=float(settings["render_timeout_seconds"]),
    )
    slides = tuple(
        replace(slide, background_path=assets.add(png, extension="png", prefix="backgrounds/background"))
        for slide, png in zip(deck.slides, pages, strict=True)
    )
    return Deck(width=deck.width, height=deck.height, slides=slides)


def _has_master_design(presentation) -> bool:
    """Whether the masters or layouts in use paint anything: pictures, shapes or a non-plain background."""
    for slide in presentation.slides:
        layout = slide.slide_layout
        for part in (layout, layout.slide_master):
            painted_background = part._element.xpath(
                "./p:cSld/p:bg//*[self::a:blipFill or self::a:gradFill or self::a:pattFill]"
                " | ./p:cSld/p:bg//a:srgbClr[translate(@val, 'f', 'F') != 'FFFFFF']"
            )
            if painted_background or any(not shape.is_placeholder for shape in part.shapes):
                return True
    return False


def _compile_check(files: tuple[BundleFile, ...], scratch_dir: Path) -> list[str]:
    """Compile the candidate project as Workspace will hold it; return Typst's warnings."""
    project = scratch_dir / "project"
    for item in files:
        target = project / item.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(item.data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, found = typst.compile_with_warnings(
                str(project / ENTRY_PATH),
                root=str(project),
                format="pdf",
                font_paths=[str(project)],  # as the project's Typst build finds the fonts the import copied
                ignore_system_fonts=True,
            )
    except typst.TypstError as exc:
        raise ConversionFailure(
            "internal_contract_violation",
            "generated_project_does_not_compile",
            f"The converted project does not compile: {exc.diagnostic[:2000]}",
        ) from exc
    return sorted({warning.message for warning in found})[:50]


def _suggested_name(filename: str) -> str:
    stem = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if stem.lower().endswith(".pptx"):
        stem = stem[: -len(".pptx")]
    cleaned = "".join(char for char in stem if char.isprintable()).strip()
    return cleaned[:200] or "Imported presentation"


if __name__ == "__main__":
    raise SystemExit(child_main(convert))
