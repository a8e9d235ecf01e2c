"""``test.echo/v1``: returns its input bundle's manifest. For protocol tests and benchmarks only.

It runs no untrusted code, so it needs no sandbox.
"""

import shutil
import threading
from pathlib import Path

from processing.worker.contracts import Executor, Limits, OutputFile, ProcessorResult


class EchoProcessor:
    operation = "test.echo/v1"
    contract = "quire-echo/1"
    runtime_version = "1"
    needs_sandbox = False

    def unavailable_reason(self) -> str | None:
        return None

    def run(
        self, *, input_dir: Path, output_dir: Path, request: dict, limits: Limits, cancel: threading.Event,
        executor: Executor | None,
    ) -> ProcessorResult:  # fmt: skip
        target = output_dir / "echo.json"
        shutil.copyfile(input_dir / "manifest.json", target)
        return ProcessorResult(outputs=(OutputFile("echo", target, "application/octet-stream", "echo.json"),))
