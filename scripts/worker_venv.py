"""The worker agent's own virtual environment, ``var/worker-venv``: `make run` and the end-to-end tests start the
agent from it, so they run the agent as it ships — its own distribution (worker/), with no Core and no Django.

It is created with ``python -m venv`` and ``pip install -e ./wire -e ./sandbox -e ./worker`` when missing or older
than one of their pyproject.toml files (editable installs: code changes need no reinstall, dependency changes do).
The worker's two distributions of ours that no index has, the protocol's vocabulary and the sandbox profile, are
named on the same command line, so pip installs them first and from here.
``python scripts/worker_venv.py`` (`make worker-venv`) makes sure of it and prints its interpreter.
"""

import fcntl
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER_DIR = ROOT / "worker"
# In the order pip is to install them: what the worker depends on, then the worker.
DISTRIBUTIONS = (ROOT / "wire", ROOT / "sandbox", WORKER_DIR)
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
            editables = [option for directory in DISTRIBUTIONS for option in ("-e", str(directory))]
            subprocess.run([str(PYTHON), "-m", "pip", "install", "--quiet", *editables], check=True)
            INSTALLED.touch()
    return PYTHON


def _current() -> bool:
    if not INSTALLED.exists():
        return False
    return all(
        INSTALLED.stat().st_mtime >= (directory / "pyproject.toml").stat().st_mtime for directory in DISTRIBUTIONS
    )


if __name__ == "__main__":
    print(worker_python())
