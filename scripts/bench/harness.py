"""What every `make bench-*` shares: a private database, repetitions, and the BENCH line format.

A benchmark runs in its own database (``quire_bench``, or ``BENCH_DATABASE_NAME`` so that two benchmarks can
run at once) on the checkout's
PostgreSQL (or ``BENCH_DATABASE_URL``), created and migrated at start and
dropped at the end, so it never touches development data.
"""

import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

BENCH_N = int(os.environ.get("BENCH_N", "0"))
BENCH_REPS = int(os.environ.get("BENCH_REPS", "3"))
# Rounds run before the measured ones and dropped (page cache, fonts, each side's first start); the smoke runs
# of make test, which check only that every figure is printed, skip them.
BENCH_WARMUP = int(os.environ.get("BENCH_WARMUP", "1"))


def rounds() -> list[bool]:
    """Whether each round counts: BENCH_WARMUP warm-up rounds, then BENCH_REPS measured ones."""
    return [False] * BENCH_WARMUP + [True] * BENCH_REPS


def n_or(default: int) -> int:
    return BENCH_N or default


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def report(figure: str, per_rep: list[float], *, unit: str, n: int, config: str) -> dict:
    """Print a human line and the BENCH json line: the median of the repetitions, with min and max."""
    value = statistics.median(per_rep)
    line = {
        "figure": figure,
        "value": round(value, 3),
        "unit": unit,
        "n": n,
        "reps": len(per_rep),
        "min": round(min(per_rep), 3),
        "max": round(max(per_rep), 3),
        "config": config,
    }
    print(f"  {figure:<40} {value:>12.3f} {unit:<8} (min {min(per_rep):.3f}, max {max(per_rep):.3f}; {config})")
    print("BENCH " + json.dumps(line), flush=True)
    return line


def _admin_url() -> str:
    if url := os.environ.get("BENCH_DATABASE_URL"):
        return url
    from config.embedded_db import ensure_running

    server = ensure_running(ROOT / "var")
    return f"postgresql://postgres@/postgres?host={server.socket_dir}"


@contextmanager
def bench_database(name: str | None = None):
    """Create, migrate and finally drop a database for this benchmark; yields its DATABASE_URL. With
    ``BENCH_TEMPLATE_DATABASE`` (a database on the same server that ``migrated_template`` made) it is a copy of
    that one instead: a few hundred milliseconds rather than the migrations' seconds, for runs of every bench."""
    name = name or os.environ.get("BENCH_DATABASE_NAME", "quire_bench")
    admin = _admin_url()
    template = os.environ.get("BENCH_TEMPLATE_DATABASE")
    _created(admin, name, template=template)
    url = os.environ["DATABASE_URL"] = _database_url(admin, name)
    if not template:
        _migrated(url)
    try:
        yield url
    finally:
        database_dropped(admin, name)


def _database_url(admin: str, name: str) -> str:
    return admin.replace("/postgres?", f"/{name}?") if "?" in admin else admin.rsplit("/", 1)[0] + f"/{name}"


def _migrated(url: str) -> None:
    env = {**os.environ, "DATABASE_URL": url}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)


def migrated_template(admin: str, name: str) -> None:
    """Make ``name`` on ``admin``'s server a freshly migrated database for ``BENCH_TEMPLATE_DATABASE``."""
    _created(admin, name)
    _migrated(_database_url(admin, name))


def _created(admin: str, name: str, *, template: str | None = None) -> None:
    """``name`` made anew on ``admin``'s server (empty, or a copy of ``template``)."""
    database_dropped(admin, name)
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))


def database_dropped(admin: str, name: str) -> None:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def django_setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


@contextmanager
def timed():
    started = time.perf_counter()
    box = {}
    yield box
    box["seconds"] = time.perf_counter() - started
