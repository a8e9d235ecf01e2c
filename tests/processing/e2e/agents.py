"""Real worker agent processes for end-to-end and fault tests, run as the agent ships: from its own virtual
environment (var/worker-venv, scripts/worker_venv.py), outside the checkout, with no Core and no Django."""

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path

from scripts.worker_venv import worker_python
from tests.processing.factories import WORKER_TOKEN


def token_file(directory: Path) -> Path:
    path = directory / "worker.token"
    if not path.exists():
        path.write_text(WORKER_TOKEN)
    return path


@contextmanager
def running_agent(url: str, directory: Path, *extra: str, name: str = "agent"):
    """Start ``python -m quire_worker`` serving test.echo/v1; stop (SIGTERM, then SIGKILL) afterwards."""
    python = worker_python()
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    log = open(directory / f"{name}.log", "ab")  # noqa: SIM115  closed below
    process = subprocess.Popen(
        [
            python,
            "-m",
            "quire_worker",
            "--core-url",
            url,
            "--token-file",
            str(token_file(directory)),
            "--instance",
            name,
            "--test-operations",
            "--operations",
            "test.echo/v1",
            "--work-dir",
            str(directory / f"{name}-work"),
            "--acquire-wait",
            "5",
            *extra,
        ],
        cwd=directory,
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**env, "PYTHONUNBUFFERED": "1"},
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()
