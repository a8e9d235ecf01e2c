"""Runs a processor's child entry point through the executor and turns what it left into a verdict.

The orchestrator side of ``child_protocol``: it builds the child's command line and a closed
environment, declares what the child may read (the Python runtime and the worker's own packages)
and write (the output directory only), and classifies every way the child can end.
"""

import json
import os
import shutil
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import quire_wire
import quire_worker
from quire_worker.contracts import (
    Diagnostic,
    Diagnostics,
    Executor,
    FailureClass,
    Limits,
    ProcessorFailure,
)
from quire_worker.processors.child_protocol import MAX_OUTCOME_BYTES, OUTCOME_FILE, SCRATCH_DIR
from quire_worker.truncation import bounded_text

# The child imports only the worker's own packages, so the sandbox shows their directories alone, at their
# own paths, and never what lies beside them in a checkout: var/ (tokens, other jobs' files), .git.
PACKAGE_DIRS = tuple(dict.fromkeys(Path(package.__file__).resolve().parent for package in (quire_worker, quire_wire)))
IMPORT_ROOTS = tuple(dict.fromkeys(directory.parent for directory in PACKAGE_DIRS))
# An address nothing listens on: libraries that honour proxy variables fail fast instead of
# reaching the network, even outside a sandbox that already has none.
UNREACHABLE_PROXY = "http://127.0.0.1:9"


@dataclass(frozen=True)
class ChildOutcome:
    diagnostics: Diagnostics


def python_runtime_paths() -> list[Path]:
    """The directories a Python child needs to read: the interpreter, its stdlib, the venv (with its
    site-packages), and the worker's own packages."""
    candidates = [
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.executable).resolve().parent,
        *PACKAGE_DIRS,
    ]
    unique: list[Path] = []
    for path in candidates:
        resolved = path.resolve()
        if resolved not in unique:
            unique.append(resolved)
    return unique


def child_environment(scratch_dir: Path) -> dict[str, str]:
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch_dir),
        "TMPDIR": str(scratch_dir),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(str(root) for root in IMPORT_ROOTS),
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "NO_PROXY": "",
        "no_proxy": "",
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = UNREACHABLE_PROXY
    return env


def run_child(
    *,
    module: str,
    input_dir: Path,
    output_dir: Path,
    settings: dict,
    limits: Limits,
    cancel: threading.Event,
    executor: Executor,
    extra_readable: tuple[Path, ...] = (),
) -> ChildOutcome:
    """Run ``python -m module`` in the sandbox; return its diagnostics or raise ProcessorFailure."""
    scratch_dir = output_dir / SCRATCH_DIR
    scratch_dir.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-B", "-m", module, "--input", str(input_dir), "--output", str(output_dir)]
    argv += ["--settings", json.dumps(settings, sort_keys=True)]
    try:
        completed = executor.run(
            argv,
            cwd=scratch_dir,
            writable=[output_dir],
            readable=[input_dir, *python_runtime_paths(), *extra_readable],
            env=child_environment(scratch_dir),
            limits=limits,
            cancel=cancel,
        )
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)
    return _judged(completed, output_dir, limits)


def _judged(completed, output_dir: Path, limits: Limits) -> ChildOutcome:
    log = bounded_text((completed.stderr + completed.stdout).decode("utf-8", errors="replace"), limits.log_bytes)
    _raise_for_interruption(completed, log)
    outcome = _read_outcome(output_dir / OUTCOME_FILE)
    (output_dir / OUTCOME_FILE).unlink(missing_ok=True)
    if outcome is None:
        raise _failure_from_exit(completed.returncode, log)
    diagnostics = Diagnostics(log=log, entries=_entries(outcome.get("entries")))
    if outcome.get("status") != "succeeded":
        raise _failure_from_outcome(outcome, diagnostics)
    return ChildOutcome(diagnostics=diagnostics)


def _raise_for_interruption(completed, log: str) -> None:
    diagnostics = Diagnostics(log=log)
    if completed.cancelled:
        raise ProcessorFailure(FailureClass.WORKER_INTERRUPTED, "cancelled", "The job was cancelled.", diagnostics)
    if completed.timed_out:
        message = "The conversion did not finish within its time limit."
        raise ProcessorFailure(FailureClass.RESOURCE_LIMIT, "wall_time_exceeded", message, diagnostics)
    if completed.output_limit_exceeded:
        message = "The conversion wrote more output than its limit allows."
        raise ProcessorFailure(FailureClass.RESOURCE_LIMIT, "output_too_large", message, diagnostics)


_SIGNAL_VERDICTS = {
    signal.SIGXCPU: ("cpu_time_exceeded", "The conversion used more CPU time than its limit allows."),
    signal.SIGXFSZ: ("file_size_exceeded", "The conversion tried to write a file larger than its limit."),
    signal.SIGABRT: ("memory_exceeded", "The conversion aborted, most likely for exceeding its memory."),
}
# Signals the runner never sends itself (its wall limit and cancellation are flagged on the run): the host's
# OOM killer, an operator, a shutdown. Not the document's fault, so Core retries the job.
_KILLED_FROM_OUTSIDE = frozenset({signal.SIGKILL, signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGQUIT})


def _failure_from_exit(returncode: int | None, log: str) -> ProcessorFailure:
    diagnostics = Diagnostics(log=log)
    if returncode is not None and returncode < 0 and -returncode in _SIGNAL_VERDICTS:
        code, message = _SIGNAL_VERDICTS[-returncode]
        return ProcessorFailure(FailureClass.RESOURCE_LIMIT, code, message, diagnostics)
    if returncode is not None and returncode < 0 and -returncode in _KILLED_FROM_OUTSIDE:
        message = f"The conversion was stopped from outside ({signal.Signals(-returncode).name}); it will be retried."
        return ProcessorFailure(FailureClass.TRANSIENT_INFRASTRUCTURE, "processor_killed", message, diagnostics)
    message = f"The conversion ended (exit status {returncode}) without reporting an outcome."
    return ProcessorFailure(FailureClass.INTERNAL_CONTRACT_VIOLATION, "child_crashed", message, diagnostics)


def _failure_from_outcome(outcome: dict, diagnostics: Diagnostics) -> ProcessorFailure:
    failure_class = outcome.get("failure_class")
    if failure_class not in FailureClass or outcome.get("status") != "failed":
        message = "The conversion reported an outcome outside the failure vocabulary."
        return ProcessorFailure(FailureClass.INTERNAL_CONTRACT_VIOLATION, "bad_outcome", message, diagnostics)
    code = str(outcome.get("code") or "conversion_failed")[:100]
    message = str(outcome.get("message") or "The conversion failed.")[:2000]
    return ProcessorFailure(failure_class, code, message, diagnostics)


def _read_outcome(path: Path) -> dict | None:
    if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_OUTCOME_BYTES:
        return None
    try:
        outcome = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return outcome if isinstance(outcome, dict) else None


def _entries(raw) -> tuple[Diagnostic, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(_entry(item) for item in raw[:200] if isinstance(item, dict))


def _entry(item: dict) -> Diagnostic:
    file = item.get("file")
    line = item.get("line")
    severity = item.get("severity") if item.get("severity") in ("error", "warning", "info") else "info"
    return Diagnostic(
        file=str(file)[:500] if isinstance(file, str) else None,
        line=line if isinstance(line, int) and not isinstance(line, bool) else None,
        severity=severity,
        message=str(item.get("message", ""))[:2000],
    )
