"""``test.echo/v1``: returns its input bundle's manifest. For protocol tests and benchmarks only.

It runs no untrusted code, so it needs no sandbox. Two files in the project
steer it for fault tests: ``echo-delay.txt`` holding ``<attempt>:<seconds>``
lines (wait that long on that attempt, stopping early on cancellation) and
``echo-crash.txt`` (the whole agent process dies, as a crashing worker would).
"""

import os
import shutil
import threading
from pathlib import Path

from quire_worker.contracts import Executor, Limits, OutputFile, ProcessorResult


def _delay_for(input_dir: Path, attempt: int) -> float:
    steering = input_dir / "files" / "echo-delay.txt"
    if not steering.exists():
        return 0.0
    for line in steering.read_text().splitlines():
        number, _, seconds = line.partition(":")
        if number.strip() in (str(attempt), "*"):
            return float(seconds)
    return 0.0


class EchoProcessor:
    operation = "test.echo/v1"
    contract = "quire-echo/1"
    runtime_version = "1"
    needs_sandbox = False

    def unavailable_reason(self) -> str | None:
        return None

    def run(
        self,
        *,
        input_dir: Path,
        output_dir: Path,
        request: dict,
        limits: Limits,
        cancel: threading.Event,
        executor: Executor | None,
    ) -> ProcessorResult:
        if (input_dir / "files" / "echo-crash.txt").exists():
            os._exit(70)
        cancel.wait(_delay_for(input_dir, int(request.get("attempt", 1))))
        target = output_dir / "echo.json"
        shutil.copyfile(input_dir / "manifest.json", target)
        return ProcessorResult(outputs=(OutputFile("echo", target, "application/octet-stream", "echo.json"),))
