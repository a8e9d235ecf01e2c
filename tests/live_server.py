"""A real Quire web server (gunicorn + uvicorn) in a child process, on the test database."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from django.db import connection, connections

from foundation.database.direct import DIRECT

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url_of_tests() -> str:
    return _url_of(connection.settings_dict)


def database_environment_of_tests() -> dict[str, str]:
    """``DATABASE_URL`` (and, in the pooled test mode, ``DATABASE_DIRECT_URL``) for a process of Core that a
    test starts: the test database, reached as the tests reach it."""
    environment = {"DATABASE_URL": database_url_of_tests()}
    if DIRECT in connections.settings:
        environment["DATABASE_DIRECT_URL"] = _url_of(connections[DIRECT].settings_dict)
    return environment


def _url_of(settings: dict) -> str:
    host = settings.get("HOST") or settings["OPTIONS"].get("host", "")
    auth = quote(settings["USER"])
    if settings.get("PASSWORD"):
        auth += ":" + quote(settings["PASSWORD"])
    if host.startswith("/"):
        return f"postgresql://{auth}@/{settings['NAME']}?host={quote(host)}"
    port = settings.get("PORT") or "5432"
    return f"postgresql://{auth}@{host}:{port}/{settings['NAME']}"


@contextmanager
def quire_server(
    *, storage_dir: Path, extra_env: dict[str, str] | None = None, workers: int = 1, port: int | None = None
):
    """A server on ``port`` (a free one by default: a test that restarts a server passes the one it had)."""
    port = port or free_port()
    env = {
        **os.environ,
        **database_environment_of_tests(),
        "QUIRE_STORAGE_DIR": str(storage_dir),
        "DEBUG": "false",
        "PYTHONUNBUFFERED": "1",
        "OFFICE_WARM_ON_START": "false",  # converters start on a first Office preview, not with every server
        "OFFICE_HOST": "process",  # no machine-wide office_host runs beside a test's server (unless it says so)
        **(extra_env or {}),
    }
    log = open(storage_dir.parent / f"server-{port}.log", "ab")  # noqa: SIM115  closed below
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.asgi:application",
            "--worker-class",
            "config.http.server.QuireWorker",
            "--workers",
            str(workers),
            "--bind",
            f"127.0.0.1:{port}",
            "--graceful-timeout",
            "2",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(url, process, storage_dir.parent / f"server-{port}.log")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def _wait_until_serving(url: str, process: subprocess.Popen, log_path: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited early:\n{log_path.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(f"{url}/v1/schema", timeout=2).read()  # noqa: S310  loopback only
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"server did not start:\n{log_path.read_text()[-3000:]}")
