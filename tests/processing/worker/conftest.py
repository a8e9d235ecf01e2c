import threading
from pathlib import Path

import pytest

from processing.worker.contracts import Limits, ProcessorResult
from processing.worker.processors.latex import LatexProcessor
from processing.worker.sandbox import BwrapExecutor
from processing.worker.sandbox.uids import DEFAULT_SANDBOX_UIDS
from tests.processing.worker.bundles import write_project_bundle

# The last uid of the sandbox range: tests that look for the job's processes run on it alone.
WATCHED_UID = DEFAULT_SANDBOX_UIDS[-1]


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
        return write_project_bundle(job_dir / "input", files, **manifest)

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
    """``build(limits=..., executor=..., cancel=...)``: run the LaTeX processor on the job's bundle."""

    def run(
        *, limits: Limits | None = None, executor=None, cancel: threading.Event | None = None
    ) -> ProcessorResult:
        output_dir = job_dir / "output"
        for leftover in output_dir.iterdir():
            leftover.unlink()
        return latex_processor.run(
            input_dir=job_dir / "input",
            output_dir=output_dir,
            request={"operation": latex_processor.operation},
            limits=limits or Limits(wall_seconds=60),
            cancel=cancel or threading.Event(),
            executor=executor or BwrapExecutor(),
        )

    return run
