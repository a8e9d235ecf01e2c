"""`make run`: the embedded database, migrations, the demo login, and Quire's processes.

Starts the web server (gunicorn with the uvicorn worker) plus any background
processes Quire has, prints the URL and login, and on Ctrl-C or SIGTERM stops
everything it started, including the embedded PostgreSQL if it started it.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

PYTHON = sys.executable
PORT = os.environ.get("PORT", "8000")
HOST = os.environ.get("HOST", "127.0.0.1")
DEMO_USER = os.environ.get("QUIRE_DEMO_USER", "demo")
DEMO_PASSWORD = os.environ.get("QUIRE_DEMO_PASSWORD", "demo-password")


def manage(*args: str) -> None:
    subprocess.run([PYTHON, "manage.py", *args], check=True, cwd=ROOT)


def background_processes() -> list[tuple[str, list[str]]]:
    return [
        (
            "web",
            [
                PYTHON, "-m", "gunicorn", "config.asgi:application",
                "--worker-class", "config.http.server.QuireWorker",
                "--bind", f"{HOST}:{PORT}", "--workers", os.environ.get("WEB_CONCURRENCY", "2"),
                "--graceful-timeout", "10", "--access-logfile", "-",
            ],
        ),
    ]  # fmt: skip


def main() -> int:
    embedded = not os.environ.get("DATABASE_URL")
    started_db = False
    if embedded:
        from config.embedded_db import ensure_running

        started_db = ensure_running(ROOT / "var").started_here
    manage("migrate", "--no-input", "-v", "0")
    manage("ensure_user", DEMO_USER, DEMO_PASSWORD, "--staff")
    manage("seed_demo_project", DEMO_USER)

    children: list[tuple[str, subprocess.Popen]] = []
    for name, command in background_processes():
        children.append((name, subprocess.Popen(command, cwd=ROOT, start_new_session=True)))

    stopping = False

    def stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    print(
        f"\n  Quire is running at http://{HOST}:{PORT}/\n  Sign in as {DEMO_USER} / {DEMO_PASSWORD}\n",
        flush=True,
    )
    try:
        while not stopping:
            for name, child in children:
                if child.poll() is not None:
                    print(f"{name} exited with {child.returncode}; stopping.", file=sys.stderr)
                    stopping = True
            time.sleep(0.3)
    finally:
        for _, child in children:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for _, child in children:
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
        if started_db:
            from config.embedded_db import stop as stop_db

            stop_db(ROOT / "var" / "pgdata")
            print("Stopped the embedded database.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
