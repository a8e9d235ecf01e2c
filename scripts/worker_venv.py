"""The worker agent's own virtual environment, ``var/worker-venv``: `make run` and the end-to-end tests start the
agent from it, so they run the agent as it ships — its own distribution (worker/), with no Core and no Django.

It is created with ``python -m venv`` and ``pip install -e ./worker`` when missing or older than
worker/pyproject.toml (an editable install: code changes need no reinstall, dependency changes do).
``python scripts/worker_venv.py`` (`make worker-venv`) makes sure of it and prints its interpreter.
"""

import fcntl
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER_DIR = ROOT / "worker"
VENV = ROOT / "var" / "worker-venv"
PYTHON = VENV / "bin" / "python"
INSTALLED = VENV / ".installed"


def worker_python() -> Path:
    """The worker venv's interpreter, once the venv is current; safe when several processes ask at once.

    Raises ``subprocess.CalledProcessError`` when the venv cannot be created or the worker not installed.
    """
    if _current():
        return PYTHON
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV.parent / "worker-venv.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be installing it right now: wait for it
        if not _current():
            INSTALLED.unlink(missing_ok=True)
            if not PYTHON.exists():
                subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
            subprocess.run([str(PYTHON), "-m", "pip", "install", "--quiet", "-e", str(WORKER_DIR)], check=True)
            INSTALLED.touch()
    return PYTHON


def _current() -> bool:
    return INSTALLED.exists() and INSTALLED.stat().st_mtime >= (WORKER_DIR / "pyproject.toml").stat().st_mtime


if __name__ == "__main__":
    print(worker_python())
