"""The worker ships alone: its own distribution installs into an empty virtual environment, without Core or Django."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The worker and the distributions of ours it depends on, which no index has: pip takes them from here.
DISTRIBUTIONS = ("wire", "sandbox", "worker")


@pytest.mark.slow
def test_pip_install_of_the_worker_alone_gives_a_working_agent_without_django(tmp_path):
    # Copies of the worker's directories alone, so nothing else of the checkout is beside them (and pip builds
    # nothing in the tree).
    sources = [
        str(shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")))
        for name in DISTRIBUTIONS
    ]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "--quiet", *sources], cwd=tmp_path, check=True, timeout=600)

    helped = subprocess.run([python, "-m", "quire_worker", "--help"], cwd=tmp_path, capture_output=True, text=True)
    django = subprocess.run([python, "-c", "import django"], cwd=tmp_path, capture_output=True, text=True)

    assert helped.returncode == 0, helped.stderr
    assert "--core-url" in helped.stdout
    assert django.returncode != 0 and "No module named 'django'" in django.stderr
