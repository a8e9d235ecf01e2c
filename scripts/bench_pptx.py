"""Times the PPTX import (both profiles) and the Typst→PPTX export on a generated 20-slide deck, then runs
both ways over a corpus of decks against LibreOffice (``scripts/bench/pptx_corpus.py``).

    make bench-pptx        # BENCH_REPS=5 by default, after one warm-up run; BENCH_CORPUS bounds the corpus

Each figure goes through the whole processor: orchestrator, child process, validation of its
outputs. The executor is the tests' plain-subprocess one (rlimits, no bubblewrap), so the
sandbox's own start-up cost is not included. Prints a table and one ``BENCH {json}`` line per
figure (see ../shared/docs/benchmarks.md).
"""

import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image
from pptx import Presentation
from pptx.util import Inches

from quire_worker.contracts import Limits
from quire_worker.processors.pptx.import_typst import PptxImportProcessor
from quire_worker.processors.typst.export_pptx import TypstExportProcessor
from tests.worker.conftest import write_project_bundle
from tests.worker.executors import SubprocessTestExecutor

SLIDES = 20
REPS = int(os.environ.get("BENCH_REPS", "5"))
LIMITS = Limits(wall_seconds=300, cpu_seconds=300)


def twenty_slide_deck() -> bytes:
    presentation = Presentation()
    presentation.slide_width, presentation.slide_height = Inches(13.333), Inches(7.5)
    photo = io.BytesIO()
    Image.new("RGB", (800, 600), (40, 90, 160)).save(photo, format="PNG")
    for number in range(1, SLIDES + 1):
        slide = presentation.slides.add_slide(presentation.slide_layouts[1 if number % 4 else 5])
        slide.shapes.title.text = f"Slide {number}: results & next steps"
        if number % 4:
            body = slide.placeholders[1].text_frame
            body.text = f"Point {number} with *stars* and #hashes"
            for level, text in ((1, "detail one"), (1, "detail two"), (0, "closing point")):
                paragraph = body.add_paragraph()
                paragraph.text, paragraph.level = text, level
        else:
            table = slide.shapes.add_table(4, 3, Inches(1), Inches(2), Inches(8), Inches(3)).table
            for row in range(4):
                for column in range(3):
                    table.cell(row, column).text = f"r{row}c{column}"
            slide.shapes.add_picture(io.BytesIO(photo.getvalue()), Inches(9.5), Inches(2), Inches(3))
        slide.notes_slide.notes_text_frame.text = f"Notes for slide {number}"
    output = io.BytesIO()
    presentation.save(output)
    return output.getvalue()


def twenty_page_project() -> dict[str, str]:
    pages = [
        f"= Page {number}\n- first point\n  - nested point\n- $sum_(i=1)^{number} i$\n"
        for number in range(1, SLIDES + 1)
    ]
    return {"main.typ": '#set page(paper: "presentation-16-9")\n#set text(size: 28pt)\n' + "#pagebreak()\n".join(pages)}


def timed_runs(run_once) -> list[float]:
    run_once()  # warm-up: page cache, LibreOffice's first start
    durations = []
    for _ in range(REPS):
        started = time.perf_counter()
        run_once()
        durations.append((time.perf_counter() - started) * 1000)
    return durations


def import_runner(deck: bytes, profile: str, workdir: Path):
    def run_once():
        input_dir, output_dir = _fresh(workdir)
        (input_dir / "input.pptx").write_bytes(deck)
        PptxImportProcessor().run(
            input_dir=input_dir,
            output_dir=output_dir,
            limits=LIMITS,
            request={"input_profile": profile, "filename": "bench.pptx"},
            cancel=threading.Event(),
            executor=SubprocessTestExecutor(),
        )

    return run_once


def export_runner(files: dict[str, str], workdir: Path):
    def run_once():
        input_dir, output_dir = _fresh(workdir)
        write_project_bundle(input_dir, files, entry_path="main.typ", project_type="typst")
        TypstExportProcessor().run(
            input_dir=input_dir,
            output_dir=output_dir,
            request={},
            limits=LIMITS,
            cancel=threading.Event(),
            executor=SubprocessTestExecutor(),
        )

    return run_once


def _fresh(workdir: Path) -> tuple[Path, Path]:
    shutil.rmtree(workdir, ignore_errors=True)
    (workdir / "input").mkdir(parents=True)
    (workdir / "output").mkdir()
    return workdir / "input", workdir / "output"


def report(figure: str, durations: list[float], config: str) -> None:
    median = statistics.median(durations)
    print(f"{figure:<42} {median:>9.1f} ms   (min {min(durations):.1f}, max {max(durations):.1f}, n={REPS})")
    line = {
        "figure": figure,
        "value": round(median, 1),
        "unit": "ms",
        "n": len(durations),
        "reps": REPS,
        "min": round(min(durations), 1),
        "max": round(max(durations), 1),
        "config": config,
    }
    print("BENCH " + json.dumps(line))


def main() -> None:
    executor_note = "plain subprocess executor (rlimits, no bubblewrap), 2 cores"
    with tempfile.TemporaryDirectory(prefix="bench-pptx-") as scratch:
        workdir = Path(scratch)
        deck = twenty_slide_deck()
        report(
            "pptx_import_ms_p50_20_slides",
            timed_runs(import_runner(deck, "editable", workdir)),
            f"editable profile, {SLIDES} slides with bullets, tables, a picture; {executor_note}",
        )
        if shutil.which("soffice"):
            report(
                "pptx_import_faithful_ms_p50_20_slides",
                timed_runs(import_runner(deck, "faithful", workdir)),
                f"faithful profile (LibreOffice renders backgrounds), {SLIDES} slides; {executor_note}",
            )
        report(
            "typst_export_ms_p50_20_pages",
            timed_runs(export_runner(twenty_page_project(), workdir)),
            f"{SLIDES} presentation-16-9 pages at 192 ppi; {executor_note}",
        )
        if shutil.which("soffice"):
            from scripts.bench.pptx_corpus import run_corpus

            run_corpus(workdir / "corpus")


if __name__ == "__main__":
    main()
