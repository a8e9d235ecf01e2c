"""The procrastinate peer of `make bench-queue`, from Quire's side: its virtual environment, database and run.

procrastinate (3.x, from PyPI) is installed into a virtual environment of the benchmark's own
(``var/bench-venvs/procrastinate``, or ``BENCH_PROCRASTINATE_VENV``), created when missing: it is never a
dependency of Quire. It runs on a database of its own on the server Quire's benchmark uses, created and
dropped here, in the same run, right beside Quire's measurements (``scripts/bench/peers/procrastinate_app.py``
does the measuring, in that environment).
"""

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from scripts.bench.harness import ROOT

REQUIREMENT = "procrastinate>=3,<4"
VENV = Path(os.environ.get("BENCH_PROCRASTINATE_VENV", ROOT / "var" / "bench-venvs" / "procrastinate"))
APP = Path(__file__).with_name("peers") / "procrastinate_app.py"  # alone there: no module of ours shadows one


def peer_python() -> Path:
    """The peer environment's interpreter, with procrastinate 3 installed (created or repaired when needed)."""
    python = VENV / "bin" / "python"
    check = [str(python), "-c", "import procrastinate, sys; sys.exit(procrastinate.__version__.split('.')[0] != '3')"]
    if python.exists() and subprocess.run(check, capture_output=True, check=False).returncode == 0:
        return python
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", REQUIREMENT],
                   check=True)  # fmt: skip
    return python


@contextmanager
def peer_database(quire_url: str):
    """A database of procrastinate's own beside Quire's benchmark database (same server); yields its conninfo."""
    name = f"{conninfo_to_dict(quire_url)['dbname']}_procrastinate"
    with psycopg.connect(quire_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield make_conninfo(quire_url, dbname=name)
    finally:
        with psycopg.connect(quire_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def peer_run(quire_url: str, *, jobs: int, reps: int, pickups: int) -> dict[str, dict]:
    """Run the peer's drains and pickups; returns its figures by name, each with its per-repetition values."""
    python = peer_python()
    with peer_database(quire_url) as conninfo:
        run = subprocess.run(
            [str(python), str(APP), "--jobs", str(jobs), "--reps", str(reps), "--pickups", str(pickups)],
            env={**os.environ, "PEER_CONNINFO": conninfo}, capture_output=True, text=True, check=False,
        )  # fmt: skip
    if run.returncode != 0:
        raise RuntimeError(f"the procrastinate peer failed ({run.returncode}):\n{run.stderr[-3000:]}")
    figures = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return {figure["figure"]: figure for figure in figures}
