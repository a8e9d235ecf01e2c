"""What a processor receives and returns, and how it runs untrusted tools.

A processor never sees the worker token, Core's URL, the database or any user
credential. It gets an input directory (the verified, unpacked input: for
``project-bundle/v1`` a ``manifest.json`` and a ``files/`` tree), an empty
output directory, the normalized request, its limits, a cancellation event and
an executor that runs commands inside the sandbox.
"""

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from quire_wire import FailureClass  # the closed failure vocabulary, shared with Core


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 120.0
    cpu_seconds: int = 120
    memory_bytes: int = 2 * 1024**3
    output_bytes: int = 128 * 1024**2
    file_size_bytes: int = 256 * 1024**2
    max_processes: int = 64
    max_open_files: int = 256
    tmp_bytes: int = 256 * 1024**2
    log_bytes: int = 256 * 1024


@dataclass(frozen=True)
class Diagnostic:
    file: str | None
    line: int | None
    severity: str  # "error" | "warning" | "info"
    message: str


@dataclass(frozen=True)
class Diagnostics:
    """A bounded log (head and tail kept, with a marker where cut) and structured entries."""

    log: str = ""
    entries: tuple[Diagnostic, ...] = ()


@dataclass(frozen=True)
class OutputFile:
    role: str
    path: Path
    media_type: str
    filename: str


@dataclass(frozen=True)
class ProcessorResult:
    outputs: tuple[OutputFile, ...]
    diagnostics: Diagnostics = field(default_factory=Diagnostics)


class ProcessorFailure(Exception):
    """A classified failure of one job; ``failure_class`` is a ``FailureClass`` value."""

    def __init__(self, failure_class: str, code: str, message: str, diagnostics: Diagnostics | None = None):
        if failure_class not in FailureClass:
            raise ValueError(f"unknown failure class {failure_class!r}")
        super().__init__(message)
        self.failure_class = failure_class
        self.code = code
        self.message = message
        self.diagnostics = diagnostics or Diagnostics()


@dataclass(frozen=True)
class CompletedRun:
    """How one command ended.

    ``stdout`` and ``stderr`` keep a bounded head and tail of each stream. ``output_limit_exceeded``
    means the command was stopped for producing more than ``Limits.output_bytes`` (streams plus
    bytes written into its writable directories).
    """

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    cancelled: bool = False
    output_limit_exceeded: bool = False


class ExecutorError(Exception):
    """The executor could not run the command at all: no sandbox could be set up, or no such program.

    Processors report it as ``transient_infrastructure``: the job itself is not at fault.
    """


class Executor(Protocol):
    """Runs one command for one job, confined to the job's directories, and kills its whole tree."""

    name: str
    is_sandbox: bool

    def run(
        self,
        argv: list[str],
        *,
        cwd: Path,
        writable: list[Path],
        readable: list[Path],
        env: dict[str, str],
        limits: Limits,
        cancel: threading.Event,
    ) -> CompletedRun: ...


class Processor(Protocol):
    operation: str
    contract: str  # the processor version and its toolchain, e.g. "quire-latex/3 texlive-2022 latexmk-4.79 …"
    runtime_version: str

    def unavailable_reason(self) -> str | None:
        """Why this processor cannot run on this host (missing tools), or None when it can."""

    def run(
        self,
        *,
        input_dir: Path,
        output_dir: Path,
        request: dict,
        limits: Limits,
        cancel: threading.Event,
        executor: Executor,
    ) -> ProcessorResult:
        """Produce outputs in ``output_dir`` or raise ProcessorFailure."""
