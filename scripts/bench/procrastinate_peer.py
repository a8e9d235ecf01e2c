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


class PeerSession:
    """The peer's runs on one database of its own, each a call of the peer script (figures by name)."""

    def __init__(self, conninfo: str) -> None:
        self._conninfo = conninfo
        self._python = peer_python()

    def run(self, *, jobs: int, reps: int, pickups: int, concurrency: tuple[int, ...] = (1, 4)) -> dict[str, dict]:
        arguments = ["--jobs", str(jobs), "--reps", str(reps), "--pickups", str(pickups)]
        arguments += ["--concurrency", ",".join(str(c) for c in concurrency)]
        run = subprocess.run(
            [str(self._python), str(APP), *arguments],
            env={**os.environ, "PEER_CONNINFO": self._conninfo}, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if run.returncode != 0:
            raise RuntimeError(f"the procrastinate peer failed ({run.returncode}):\n{run.stderr[-3000:]}")
        figures = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        return {figure["figure"]: figure for figure in figures}

    def drain_once(self, *, jobs: int, concurrency: int) -> float:
        """One drain of ``jobs`` no-op jobs by 2 processes of ``concurrency``, in jobs/s."""
        figures = self.run(jobs=jobs, reps=1, pickups=0, concurrency=(concurrency,))
        [rate] = figures[f"procrastinate_drain_jobs_per_s_2_processes_concurrency_{concurrency}"]["per_rep"]
        return rate


@contextmanager
def peer_session(quire_url: str):
    """A ``PeerSession`` on a database of the peer's own beside ``quire_url``'s, dropped afterwards."""
    with peer_database(quire_url) as conninfo:
        yield PeerSession(conninfo)
