"""The corpus half of ``make bench-pptx``: PPTX both ways on many decks, against LibreOffice in the same run.

Decks: python-pptx's own test decks (tests/corpora/pptx/python-pptx) and the generated ones of the tests (theme
colours, anchors, fonts, a dark theme, placed boxes and shapes, tables, pictures, notes). Typst projects: the
editable import of each deck that has slides, plus a styled page and 20 presentation pages.

Import, per deck: the editable and the faithful profile against ``soffice --convert-to pdf`` of the same file
(cold LibreOffice, the peer); likeness: each slide of the import's Typst build against LibreOffice's rendering
of the original slide.

Export, per project: Quire's export (text boxes over a picture of the rest) and LibreOffice's PDF import into
Impress (``soffice --infilter=impress_pdf_import --convert-to pptx`` of the Typst PDF, the alternative the
export was measured against); for each, the words in slide text frames (python-pptx) over the words of the
Typst PDF's text layer (pypdf), and the likeness of LibreOffice's rendering of the PPTX to the Typst page.

Likeness is ``likeness.ssim``; pages are rasterised by Typst at the same size on both sides (a PDF page is
an image Typst can draw). BENCH_CORPUS (default: all) bounds the decks and projects.
"""

import io
import os
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import typst
from pptx import Presentation
from pypdf import PdfReader

from quire_worker.processors.workspace_bundle import read_bundle
from scripts.bench.harness import report
from scripts.bench.likeness import ssim
from tests.worker.conftest import pptx_imported, typst_exported

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpora" / "pptx" / "python-pptx"
RASTER_PPI = 48
LIMIT = int(os.environ.get("BENCH_CORPUS", "0")) or None


def generated_decks() -> dict[str, bytes]:
    from scripts.bench_pptx import twenty_slide_deck
    from tests.worker.pptx_decks import five_slide_deck, picture_png
    from tests.worker.processors.pptx.test_import_looks import dark_theme_deck, styled_deck
    from tests.worker.processors.pptx.test_pptx_round_trip import placed_deck

    return {
        "generated-twenty-slides": twenty_slide_deck(),
        "generated-five-slides": five_slide_deck(picture_png())[0],
        "generated-theme-styles": styled_deck(),
        "generated-dark-theme": dark_theme_deck(),
        "generated-placed": placed_deck(),
    }


def corpus_decks() -> dict[str, bytes]:
    decks = {path.stem: path.read_bytes() for path in sorted(CORPUS.glob("*.pptx"))}
    return dict(list({**decks, **generated_decks()}.items())[:LIMIT])


@dataclass
class Side:
    """One way of doing a conversion over the corpus: its times, word ratios and slide likenesses."""

    ms: list[float] = field(default_factory=list)
    words: list[float] = field(default_factory=list)
    likeness: list[float] = field(default_factory=list)

    def timed(self, run):
        started = time.perf_counter()
        result = run()
        self.ms.append((time.perf_counter() - started) * 1000)
        return result


class LibreOffice:
    """``soffice`` as a person runs it (a process per file), with one user profile for the whole run."""

    def __init__(self, workdir: Path):
        self.profile = (workdir / "libreoffice-profile").as_uri()

    def convert(self, source: Path, target: str, *, into: Path, pdf_import: bool = False) -> Path:
        into.mkdir(parents=True, exist_ok=True)
        argv = ["soffice", "--headless", "--norestore", f"-env:UserInstallation={self.profile}"]
        if pdf_import:
            argv.append("--infilter=impress_pdf_import")
        argv += ["--convert-to", target, "--outdir", str(into), str(source)]
        subprocess.run(argv, capture_output=True, timeout=300, check=True)
        converted = into / f"{source.stem}.{target}"
        if not converted.is_file():
            raise RuntimeError(f"LibreOffice made no {target} of {source.name}")
        return converted


def pdf_pages(pdf: Path, width_pt: float, height_pt: float) -> list[bytes]:
    """The PDF's pages as PNGs of ``width_pt`` × ``height_pt`` (Typst draws a PDF page as an image)."""
    count = len(PdfReader(pdf).pages)
    source = pdf.parent / f"{pdf.stem}-pages.typ"
    lines = [f"#set page(width: {width_pt}pt, height: {height_pt}pt, margin: 0pt)"]
    lines += [
        f'#page(image("{pdf.name}", page: {number}, width: 100%, height: 100%))' for number in range(1, count + 1)
    ]
    source.write_text("\n".join(lines) + "\n")
    pages = typst.compile(str(source), root=str(pdf.parent), format="png", ppi=RASTER_PPI, ignore_system_fonts=True)
    return pages if isinstance(pages, list) else [pages]


def imported(deck: bytes, profile: str, workdir: Path, name: str) -> Path:
    """The deck's import, unpacked: the project directory."""
    root = workdir / f"import-{profile}-{name}"
    result = pptx_imported(deck, root, profile=profile, filename=f"{name}.pptx")
    bundle_path = next(output.path for output in result.outputs if output.role == "bundle")
    project = root / "project"
    for item in read_bundle(bundle_path, max_files=10_000, max_expanded_bytes=512 * 1024**2).files:
        (project / item.path).parent.mkdir(parents=True, exist_ok=True)
        (project / item.path).write_bytes(item.data)
    return project


def exported(files: dict, workdir: Path, name: str) -> Path:
    result = typst_exported(files, workdir / f"export-{name}")
    return next(output.path for output in result.outputs if output.role == "pptx")


def typst_pdf(project: Path) -> bytes:
    root = str(project)
    return typst.compile(str(project / "main.typ"), root=root, font_paths=[root], ignore_system_fonts=True)


def frame_words(pptx: Path) -> int:
    presentation = Presentation(str(pptx))
    return sum(
        len(shape.text_frame.text.split())
        for slide in presentation.slides
        for shape in slide.shapes
        if shape.has_text_frame
    )


def pdf_words(pdf: bytes) -> int:
    return sum(len((page.extract_text() or "").split()) for page in PdfReader(io.BytesIO(pdf)).pages)


def project_files(project: Path) -> dict:
    return {
        str(path.relative_to(project)): path.read_text() if path.suffix == ".typ" else path.read_bytes()
        for path in sorted(project.rglob("*"))
        if path.is_file()
    }


def figure(name: str, values: list[float], unit: str, config: str) -> None:
    report(name, values, unit=unit, n=len(values), config=config)


def run_corpus(workdir: Path) -> None:
    decks = corpus_decks()
    office = LibreOffice(workdir)
    editable, faithful, peer = Side(), Side(), Side()
    projects: dict[str, dict] = {}
    for name, deck in decks.items():
        original = workdir / "decks" / f"{name}.pptx"
        original.parent.mkdir(parents=True, exist_ok=True)
        original.write_bytes(deck)
        project = editable.timed(lambda: imported(deck, "editable", workdir, name))  # noqa: B023
        faithful.timed(lambda: imported(deck, "faithful", workdir, name))  # noqa: B023
        rendered = peer.timed(lambda: office.convert(original, "pdf", into=workdir / "office" / name))  # noqa: B023
        if not len(PdfReader(rendered).pages) or not Presentation(io.BytesIO(deck)).slides:
            continue  # a deck without slides: nothing to compare
        projects[name] = project_files(project)
        width, height = (length / 12700 for length in _slide_size(deck))
        theirs = pdf_pages(rendered, width, height)
        editable.likeness += [ssim(a, b) for a, b in zip(theirs, typst_pngs(project), strict=False)]
    ours = sum(name.startswith("generated-") for name in decks)
    corpus = f"{len(decks)} decks ({len(decks) - ours} of python-pptx's test decks, {ours} generated)"
    _times("pptx_import", editable, faithful, peer, corpus)
    compared = f"{len(editable.likeness)} slides of {len(projects)} decks"
    figure(
        "pptx_import_likeness_ssim_median",
        [statistics.median(editable.likeness)],
        "x",
        f"editable import built by Typst vs LibreOffice's rendering of the original, {compared}; target ≥ 0.90",
    )
    figure("pptx_import_likeness_ssim_worst", [min(editable.likeness)], "x", "the least alike slide of the same")
    export_corpus(workdir, office, projects)


def _slide_size(deck: bytes) -> tuple[int, int]:
    presentation = Presentation(io.BytesIO(deck))
    return presentation.slide_width or 9144000, presentation.slide_height or 6858000


def _times(stem: str, editable: Side, faithful: Side, peer: Side, corpus: str) -> None:
    figure(f"{stem}_editable_ms_p50_corpus", editable.ms, "ms", f"editable profile, per deck, {corpus}")
    figure(f"{stem}_faithful_ms_p50_corpus", faithful.ms, "ms", f"faithful profile, per deck, {corpus}")
    figure("soffice_pdf_ms_p50_corpus", peer.ms, "ms", f"soffice --convert-to pdf of each deck (cold), {corpus}")
    for profile, side in (("editable", editable), ("faithful", faithful)):
        ratio = statistics.median(side.ms) / statistics.median(peer.ms)
        figure(f"{stem}_{profile}_vs_soffice_ratio", [ratio], "x", f"median {profile} import / median soffice")


def typst_pngs(project: Path) -> list[bytes]:
    root = str(project)
    pages = typst.compile(str(project / "main.typ"), root=root, font_paths=[root], format="png", ppi=RASTER_PPI,
                          ignore_system_fonts=True)  # fmt: skip
    return pages if isinstance(pages, list) else [pages]


def export_corpus(workdir: Path, office: LibreOffice, projects: dict[str, dict]) -> None:
    from scripts.bench_pptx import twenty_page_project
    from tests.worker.processors.typst.test_export_editable import STYLED

    projects = dict(list({"styled": STYLED, "twenty-pages": twenty_page_project(), **projects}.items())[:LIMIT])
    quire, impress = Side(), Side()
    for name, files in projects.items():
        source = workdir / "typst" / name
        for path, content in files.items():
            (source / path).parent.mkdir(parents=True, exist_ok=True)
            (source / path).write_bytes(content.encode() if isinstance(content, str) else content)
        pdf = typst_pdf(source)
        (source / "main.pdf").write_bytes(pdf)
        words = pdf_words(pdf)
        width, height = (float(side) for side in PdfReader(io.BytesIO(pdf)).pages[0].mediabox[2:])
        pages = typst_pngs(source)
        ours = quire.timed(lambda: exported(files, workdir, name))  # noqa: B023
        into = workdir / "impress" / name
        theirs = impress.timed(lambda: office.convert(source / "main.pdf", "pptx", into=into, pdf_import=True))  # noqa: B023
        for side, pptx in ((quire, ours), (impress, theirs)):
            side.words.append(frame_words(pptx) / words if words else 1.0)
            shown = pdf_pages(office.convert(pptx, "pdf", into=pptx.parent / "rendered"), width, height)
            side.likeness += [ssim(page, seen) for page, seen in zip(pages, shown, strict=False)]
    config = f"{len(projects)} Typst projects (the imports above, a styled page, 20 presentation pages)"
    figure("typst_export_ms_p50_corpus", quire.ms, "ms", f"Quire's export, per project, {config}")
    figure("impress_pdf_import_ms_p50_corpus", impress.ms, "ms", f"soffice impress_pdf_import of the PDF, {config}")
    for label, side in (("typst_export", quire), ("impress_pdf_import", impress)):
        words = "words in slide text frames / words of the Typst PDF, median over projects; target ≥ 0.98"
        figure(f"{label}_editable_words_ratio", [statistics.median(side.words)], "x", words)
        figure(f"{label}_editable_words_ratio_worst", [min(side.words)], "x", "the project with the fewest")
        pages = f"LibreOffice's rendering of the PPTX vs the Typst page, {len(side.likeness)} pages; target ≥ 0.90"
        figure(f"{label}_likeness_ssim_median", [statistics.median(side.likeness)], "x", pages)
        figure(f"{label}_likeness_ssim_worst", [min(side.likeness)], "x", "the least alike page of the same")
