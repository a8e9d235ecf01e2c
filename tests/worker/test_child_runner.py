"""How the processors' child runner judges a child that hangs, crashes, hogs or floods.

The PPTX processors rely on this classification for every way their sandboxed child can end.
"""

import signal
import threading
from pathlib import Path

import pytest

from quire_worker.contracts import CompletedRun, Limits, ProcessorFailure
from quire_worker.processors import child_runner
from quire_worker.processors.child_runner import run_child
from quire_worker.sandbox import BwrapExecutor
from tests.worker.conftest import WATCHED_UID
from tests.worker.outside_signals import killed_from_outside

CHILD = "tests.worker.misbehaving_child"
# The misbehaving child lives with the tests, which a sandboxed child can neither read nor import otherwise.
TESTS_PACKAGE = Path(__file__).resolve().parents[1]
CHECKOUT_ROOT = TESTS_PACKAGE.parent


@pytest.fixture(autouse=True)
def _tests_importable_by_the_child(monkeypatch):
    monkeypatch.setattr(child_runner, "IMPORT_ROOTS", (*child_runner.IMPORT_ROOTS, CHECKOUT_ROOT))


def run_misbehaving(
    act: str, tmp_path, executor, *, limits: Limits, cancel: threading.Event | None = None, settings=None
):
    (tmp_path / "input").mkdir()
    (tmp_path / "output").mkdir()
    return run_child(
        module=CHILD,
        input_dir=tmp_path / "input",
        output_dir=tmp_path / "output",
        settings={"act": act, **(settings or {})},
        limits=limits,
        cancel=cancel or threading.Event(),
        executor=executor,
        extra_readable=(TESTS_PACKAGE,),
    )


def failure_of(act: str, tmp_path, executor, **options) -> ProcessorFailure:
    with pytest.raises(ProcessorFailure) as raised:
        run_misbehaving(act, tmp_path, executor, **options)
    return raised.value


def test_a_child_that_never_ends_is_killed_at_the_wall_limit(tmp_path, executor):
    failure = failure_of("spin", tmp_path, executor, limits=Limits(wall_seconds=1, cpu_seconds=60))

    assert (failure.failure_class, failure.code) == ("resource_limit", "wall_time_exceeded")


def test_a_child_that_burns_cpu_is_stopped_by_its_cpu_limit(tmp_path, executor):
    failure = failure_of("spin", tmp_path, executor, limits=Limits(wall_seconds=60, cpu_seconds=1))

    assert (failure.failure_class, failure.code) == ("resource_limit", "cpu_time_exceeded")


def test_a_child_that_burns_cpu_in_the_sandbox_is_stopped_by_its_cpu_limit(tmp_path):
    failure = failure_of("spin", tmp_path, BwrapExecutor(), limits=Limits(wall_seconds=60, cpu_seconds=1))

    assert (failure.failure_class, failure.code) == ("resource_limit", "cpu_time_exceeded")


@pytest.fixture
def file_in_the_checkout_root():
    """A file in the checkout's root, beside the worker's packages, standing in for var/, .git and the like."""
    path = CHECKOUT_ROOT / "sandbox-probe.txt"
    path.write_text("checkout secret", encoding="utf-8")
    yield path
    path.unlink()


def test_a_sandboxed_child_cannot_read_the_checkout_beyond_the_package(tmp_path, file_in_the_checkout_root):
    outcome = run_misbehaving(
        "peek",
        tmp_path,
        BwrapExecutor(),
        limits=Limits(wall_seconds=60),
        settings={"path": str(file_in_the_checkout_root)},
    )

    [entry] = outcome.diagnostics.entries
    assert entry.message.startswith("unreadable")
    assert "checkout secret" not in entry.message


def test_a_cancelled_job_stops_its_child_as_interrupted(tmp_path, executor):
    cancel = threading.Event()
    cancel.set()

    failure = failure_of("spin", tmp_path, executor, limits=Limits(wall_seconds=60), cancel=cancel)

    assert (failure.failure_class, failure.code) == ("worker_interrupted", "cancelled")


def test_a_child_that_runs_out_of_memory_is_a_resource_limit(tmp_path, executor):
    failure = failure_of("hog", tmp_path, executor, limits=Limits(wall_seconds=60, memory_bytes=512 * 1024**2))

    assert (failure.failure_class, failure.code) == ("resource_limit", "memory_exceeded")


@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGTERM])
def test_a_child_killed_from_outside_is_retried_not_the_documents_fault(tmp_path, watched_executor, signal_number):
    with killed_from_outside(WATCHED_UID, once_running=CHILD, kill=CHILD, signal_number=signal_number):
        failure = failure_of("spin", tmp_path, watched_executor, limits=Limits(wall_seconds=90, cpu_seconds=90))

    assert (failure.failure_class, failure.code) == ("transient_infrastructure", "processor_killed")
    assert signal.Signals(signal_number).name in failure.message


def test_a_child_that_writes_past_the_output_limit_is_a_resource_limit(tmp_path, executor):
    failure = failure_of("flood", tmp_path, executor, limits=Limits(wall_seconds=60, output_bytes=1024**2))

    assert (failure.failure_class, failure.code) == ("resource_limit", "output_too_large")


def test_a_child_that_crashes_without_an_outcome_is_a_contract_violation_with_its_log(tmp_path, executor):
    failure = failure_of("crash", tmp_path, executor, limits=Limits(wall_seconds=60))

    assert (failure.failure_class, failure.code) == ("internal_contract_violation", "child_crashed")
    assert "a bug in the converter" in failure.diagnostics.log


def test_the_child_may_write_only_its_output_directory_and_reads_the_python_runtime(tmp_path, executor):
    run_misbehaving("nothing", tmp_path, executor, limits=Limits(wall_seconds=60))

    assert executor.last_writable == [tmp_path / "output"]
    assert tmp_path / "input" in executor.last_readable
    assert executor.last_argv[1:4] == ["-B", "-m", CHILD]


class CannedExecutor:
    """Runs nothing: every command ends as ``completed`` says, to see how the runner judges that."""

    name = "canned"
    is_sandbox = False

    def __init__(self, completed: CompletedRun):
        self.completed = completed

    def run(self, argv, **_) -> CompletedRun:
        return self.completed


def test_a_long_child_log_keeps_head_and_tail_within_the_log_limit(tmp_path):
    chatty = CompletedRun(returncode=1, stdout=b"", stderr=b"head " + b"x" * 10_000 + b" tail")

    failure = failure_of("crash", tmp_path, CannedExecutor(chatty), limits=Limits(log_bytes=100))

    log = failure.diagnostics.log
    assert log.startswith("head ") and log.endswith(" tail")
    assert len(log.encode()) <= 100
    assert "bytes cut" in log  # the one marker every bounded log carries
