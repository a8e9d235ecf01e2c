"""Fixtures for running processors directly, as the agent would: an input dir, an output dir, an executor."""

import hashlib
import json
import os
import threading
from pathlib import Path

import pytest

from quire_worker.contracts import Limits, ProcessorResult
from quire_worker.processors.latex.compile_pdf import LatexProcessor
from quire_worker.processors.pptx.import_typst import PptxImportProcessor
from quire_worker.processors.pptx.slide_model import ImportBounds
from quire_worker.processors.typst.export_pptx import TypstExportProcessor
from quire_worker.sandbox import BwrapExecutor
from quire_worker.sandbox.uids import DEFAULT_SANDBOX_UIDS
from tests.worker.bundles import write_project_bundle as write_latex_bundle
from tests.worker.executors import SubprocessTestExecutor

LIMITS = Limits(wall_seconds=120, cpu_seconds=120)


@pytest.fixture
def executor():
    return SubprocessTestExecutor()


@pytest.fixture
def import_pptx(tmp_path, executor):
    """``import_pptx(data, profile=..., bounds=...)`` runs the PPTX import on ``data``."""

    def run(data: bytes, **options):
        return pptx_imported(data, tmp_path, executor=executor, **options)

    return run


def pptx_imported(
    data: bytes,
    root: Path,
    *,
    executor=None,
    profile: str = "editable",
    bounds: ImportBounds | None = None,
    limits=LIMITS,
    filename: str = "deck.pptx",
    processor: PptxImportProcessor | None = None,
) -> ProcessorResult:
    """The PPTX import run on ``data`` in a fresh directory under ``root`` (for fixtures of a wider scope)."""
    input_dir, output_dir = _fresh_dirs(root)
    (input_dir / "input.pptx").write_bytes(data)
    processor = processor or PptxImportProcessor(bounds=bounds)
    return processor.run(
        input_dir=input_dir,
        output_dir=output_dir,
        limits=limits,
        cancel=threading.Event(),
        request={"input_profile": profile, "filename": filename},
        executor=executor or SubprocessTestExecutor(),
    )


@pytest.fixture
def export_typst(tmp_path, executor):
    """``export_typst({"main.typ": "..."})`` runs the Typst→PPTX export on that project-bundle/v1."""

    def run(files: dict[str, str | bytes], **options):
        return typst_exported(files, tmp_path, executor=executor, **options)

    return run


def typst_exported(
    files: dict[str, str | bytes],
    root: Path,
    *,
    executor=None,
    entry_path: str = "main.typ",
    project_type: str = "typst",
    processor: TypstExportProcessor | None = None,
    limits=LIMITS,
) -> ProcessorResult:
    """The Typst→PPTX export run on ``files`` in a fresh directory under ``root`` (for wider-scoped fixtures)."""
    input_dir, output_dir = _fresh_dirs(root)
    write_project_bundle(input_dir, files, entry_path=entry_path, project_type=project_type)
    return (processor or TypstExportProcessor()).run(
        input_dir=input_dir,
        output_dir=output_dir,
        request={},
        limits=limits,
        cancel=threading.Event(),
        executor=executor or SubprocessTestExecutor(),
    )


def write_project_bundle(root: Path, files: dict[str, str | bytes], *, entry_path: str, project_type: str) -> Path:
    """An unpacked project-bundle/v1, as the agent hands it to a processor."""
    records = []
    for path, content in sorted(files.items()):
        data = content.encode("utf-8") if isinstance(content, str) else content
        target = root / "files" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        kind = "text" if isinstance(content, str) else "asset"
        records.append({"path": path, "kind": kind, "length": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest = {
        "schema": "project-bundle/v1",
        "project_type": project_type,
        "entry_path": entry_path,
        "settings": {},
        "workspace_version": 1,
        "content_generation": 3,
        "source_epoch": 1_700_000_000,
        "files": records,
    }
    (root / "manifest.json").write_text(json.dumps(manifest, sort_keys=True), encoding="utf-8")
    return root / "files"


def _fresh_dirs(tmp_path: Path) -> tuple[Path, Path]:
    run_dir = Path(tmp_path) / f"run-{len(list(Path(tmp_path).glob('run-*')))}"
    (run_dir / "input").mkdir(parents=True)
    (run_dir / "output").mkdir()
    return run_dir / "input", run_dir / "output"


def _watched_uid() -> int:
    """The last uid of the sandbox range, one below it for each further pytest-xdist worker: tests that look for a
    job's processes run on a uid of their own, which no other test's sandbox uses meanwhile."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    return DEFAULT_SANDBOX_UIDS[-1 - int(worker.removeprefix("gw"))]


WATCHED_UID = _watched_uid()


@pytest.fixture
def job_dir(tmp_path: Path) -> Path:
    """A job directory as the agent lays it out: ``input/`` and an empty ``output/``."""
    (tmp_path / "job" / "input").mkdir(parents=True)
    (tmp_path / "job" / "output").mkdir()
    return tmp_path / "job"


@pytest.fixture
def bundle(job_dir: Path):
    """``bundle(files, **manifest)``: write the job's input bundle and return its directory."""

    def write(files: dict[str, str | bytes], **manifest) -> Path:
        return write_latex_bundle(job_dir / "input", files, **manifest)

    return write


@pytest.fixture(scope="session")
def latex_processor() -> LatexProcessor:
    return LatexProcessor()


@pytest.fixture
def watched_executor() -> BwrapExecutor:
    """A sandbox that runs every job as WATCHED_UID, so a test can look for what it left behind."""
    return BwrapExecutor(uids=range(WATCHED_UID, WATCHED_UID + 1))


@pytest.fixture
def build(job_dir: Path, latex_processor: LatexProcessor):
    """``build(limits=..., executor=..., cancel=..., warm_start=...)``: run the LaTeX processor on the job's bundle."""

    def run(
        *,
        limits: Limits | None = None,
        executor=None,
        cancel: threading.Event | None = None,
        warm_start: Path | None = None,
    ) -> ProcessorResult:
        output_dir = job_dir / "output"
        for leftover in output_dir.iterdir():
            leftover.unlink()
        request = {"operation": latex_processor.operation}
        if warm_start is not None:
            request["warm_start"] = str(warm_start)  # as the agent passes a claim's warm start
        return latex_processor.run(
            input_dir=job_dir / "input",
            output_dir=output_dir,
            request=request,
            limits=limits or Limits(wall_seconds=60),
            cancel=cancel or threading.Event(),
            executor=executor or BwrapExecutor(),
        )

    return run
