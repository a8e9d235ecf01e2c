"""`make run`: the embedded database, migrations, the demo login, and Quire's processes.

Starts the web server (gunicorn with the uvicorn worker), the machine's Office preview
service (its processes share it), a local worker agent, the maintenance loop and the
outbox relay (to ``OUTBOX_BROKER_URL``, NOTIFY by default), prints the URL and login,
starts again (after a growing pause) an agent, relay, Office service or maintenance loop
that dies, and on Ctrl-C or SIGTERM stops everything it started, in order, including the
embedded PostgreSQL if it started it.
The first run writes ``var/deployment.toml`` with a local worker identity whose
token is kept in ``var/worker.token``.
"""

import hashlib
import os
import secrets
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

from scripts.supervision import Supervised, stop_together  # noqa: E402  the checkout's root is on the path from here

PYTHON = sys.executable
PORT = os.environ.get("PORT", "8000")
HOST = os.environ.get("HOST", "127.0.0.1")
DEMO_USER = os.environ.get("QUIRE_DEMO_USER", "demo")
DEMO_PASSWORD = os.environ.get("QUIRE_DEMO_PASSWORD", "demo-password")
# A second member of the demo project, to try editing together (a private window signed in as them).
COAUTHOR = os.environ.get("QUIRE_DEMO_COAUTHOR", "coauthor")
COAUTHOR_PASSWORD = os.environ.get("QUIRE_DEMO_COAUTHOR_PASSWORD", "coauthor-password")


def database_prepare() -> None:
    """Migrations, the demo logins and the demo project, in this one process: each ``manage.py`` would pay
    Django's start-up (about 2 s here), and four of them were most of a second start's wait."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django
    from django.core.management import call_command
    from django.db import connections

    django.setup()
    call_command("migrate", interactive=False, verbosity=0)
    call_command("ensure_user", DEMO_USER, DEMO_PASSWORD, "--staff")
    call_command("ensure_user", COAUTHOR, COAUTHOR_PASSWORD)
    call_command("seed_demo_project", DEMO_USER, "--editor", COAUTHOR)
    connections.close_all()  # the servers and workers have their own; this process only supervises them


VAR = ROOT / "var"
WORKER_OPERATIONS = [
    "latex.compile.pdf/v1",
    "typst.compile.pdf/v1",
    "pdf.index.text/v1",
    "typst.export.pptx/v1",
    "pptx.import.typst/v1",
]


DEPLOYMENT_HEADER = "# Written by `make run`: the local worker identity. See config/deployment.example.toml.\n"


def local_worker_identity() -> Path:
    """Write a deployment with one local worker identity; return the token file.

    The token is made once; the deployment is written again when it is one `make run` wrote and its
    operations are not this version's (a newer checkout added one), so the local worker offers them all.
    """
    token_file, deployment = VAR / "worker.token", VAR / "deployment.toml"
    if os.environ.get("QUIRE_DEPLOYMENT_FILE"):
        return token_file
    VAR.mkdir(exist_ok=True)
    if not token_file.exists():
        token_file.write_text(secrets.token_urlsafe(32) + "\n")
        token_file.chmod(0o600)
    written = deployment.read_text() if deployment.exists() else DEPLOYMENT_HEADER
    wanted = _deployment_text(token_file.read_text().strip())
    if written.startswith(DEPLOYMENT_HEADER) and written != wanted:
        deployment.write_text(wanted)
    return token_file


def _deployment_text(token: str) -> str:
    operations = ", ".join(f'"{op}"' for op in WORKER_OPERATIONS)
    digest = hashlib.sha256(token.encode()).hexdigest()
    return f'{DEPLOYMENT_HEADER}[[workers]]\nname = "local"\ntoken_sha256 = "{digest}"\noperations = [{operations}]\n'


def background_processes(token_file: Path) -> list[tuple[str, list[str], bool]]:
    """(name, command, required): Quire stops when a required process exits."""
    from scripts.worker_venv import worker_python

    # The agent runs from its own virtual environment (var/worker-venv), as it ships: no Core, no Django.
    worker = [
        str(worker_python()),
        "-m",
        "quire_worker",
        "--core-url",
        f"http://{HOST}:{PORT}",
        "--token-file",
        str(token_file),
        "--instance",
        "make-run",
        "--slots",
        os.environ.get("QUIRE_WORKER_SLOTS", "2"),
        "--work-dir",
        str(VAR / "worker"),
    ]
    return [
        # This machine's one Office preview service: the web server's processes share its queue, cache and
        # warm converters through OFFICE_HOST_SOCKET (set in main()).
        ("office host", [PYTHON, "manage.py", "office_host"], False),
        ("worker", worker, False),
        ("maintenance", [PYTHON, "manage.py", "processing_maintain", "--interval", "5"], False),
        ("outbox relay", [PYTHON, "manage.py", "outbox_relay"], False),
        (
            "web",
            [
                PYTHON,
                "-m",
                "gunicorn",
                "config.asgi:application",
                "--worker-class",
                "config.http.server.QuireWorker",
                "--bind",
                f"{HOST}:{PORT}",
                "--workers",
                os.environ.get("WEB_CONCURRENCY", "2"),
                "--graceful-timeout",
                "3",  # requests still open on Ctrl-C (a long-poll, an open editor) get this long
                "--access-logfile",
                "-",
            ],
            True,
        ),
    ]


STOP_SECONDS = 4  # what each group of processes gets on Ctrl-C before SIGKILL
RELEASE_BEFORE_SECONDS = 1.5  # the agent's second SIGTERM comes this long before the deadline
ANSWER_SECONDS = 120  # a first start migrates, and a cold web server imports everything


def _answering(children, stopping) -> bool:
    """Wait until the web server answers (``/healthz``), so the URL printed works; False if it died first or
    `make run` is being stopped."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + ANSWER_SECONDS
    while time.monotonic() < deadline and not stopping():
        for child in children:
            if message := child.check():
                print(message, file=sys.stderr)
                return False
        try:
            with urllib.request.urlopen(f"http://{HOST}:{PORT}/healthz", timeout=2):
                return True
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    return not stopping()


def main() -> int:
    # A local server for one developer: Django's technical error pages help here (and only here).
    os.environ.setdefault("DEBUG", "true")
    embedded = not os.environ.get("DATABASE_URL")
    started_db = False
    if embedded:
        from config.embedded_db import ensure_running

        started_db = ensure_running(ROOT / "var").started_here
    database_prepare()
    token_file = local_worker_identity()
    os.environ.setdefault("OFFICE_HOST_SOCKET", str(VAR / "office.sock"))  # the default, said here for the host

    # The web server is required (without it nothing is reachable: `make run` stops); the others are restarted.
    children = [
        Supervised(name, command, restart=not required, cwd=ROOT)
        for name, command, required in background_processes(token_file)
    ]
    for child in children:
        child.start()

    stopping = False

    def stop(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    if not _answering(children, lambda: stopping):
        stopping = True
    else:
        print(
            f"\n  Quire is running at http://{HOST}:{PORT}/\n  Sign in as {DEMO_USER} / {DEMO_PASSWORD}"
            f"\n  (and, to edit Demo paper together, as {COAUTHOR} / {COAUTHOR_PASSWORD} in a private window)"
            f"\n  DEBUG is {'on' if os.environ['DEBUG'].lower() in ('1', 'true', 'yes', 'on') else 'off'} for this"
            " local server (DEBUG=false make run runs it as production does)\n",
            flush=True,
        )
    try:
        parent = os.getppid()
        while not stopping:
            # `make` does not pass SIGTERM on to its recipe: stop when the make that started us is gone.
            stopping = stopping or os.getppid() != parent
            for child in children:
                if message := child.check():
                    print(message, file=sys.stderr)
                    stopping = True
            time.sleep(0.3)
    finally:
        # All but the web server at once (the agent drains, releasing its claims, through the web server),
        # then the web server.
        # A second SIGTERM before the deadline: an agent still finishing a build gives its claim back (the job
        # is queued again at once, no attempt used) rather than have it lost to SIGKILL and its lease.
        *others, web = children
        stop_together(others, seconds=STOP_SECONDS, second_signal_before=RELEASE_BEFORE_SECONDS)
        web.stop(timeout=STOP_SECONDS)
        if started_db:
            from config.embedded_db import stop as stop_db

            stop_db(ROOT / "var" / "pgdata")
            print("Stopped the embedded database.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
