"""The worker ships alone: its own distribution installs into an empty virtual environment, without Core or Django."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WORKER_DIR = Path(__file__).resolve().parents[2] / "worker"


@pytest.mark.slow
def test_pip_install_of_the_worker_alone_gives_a_working_agent_without_django(tmp_path):
    # A copy of worker/ alone, so nothing else of the checkout is beside it (and pip builds nothing in the tree).
    source = shutil.copytree(
        WORKER_DIR, tmp_path / "worker", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", str(source)], cwd=tmp_path, check=True, timeout=600)

    helped = subprocess.run([python, "-m", "quire_worker", "--help"], cwd=tmp_path, capture_output=True, text=True)
    django = subprocess.run([python, "-c", "import django"], cwd=tmp_path, capture_output=True, text=True)

    assert helped.returncode == 0, helped.stderr
    assert "--core-url" in helped.stdout
    assert django.returncode != 0 and "No module named 'django'" in django.stderr
