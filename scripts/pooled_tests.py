"""The pooled test mode: tests run with Core's database traffic through a real PgBouncer in transaction mode.

    python -m scripts.pooled_tests [pytest arguments]   (make test runs it with POOLED_TESTS)

``DATABASE_URL`` points at the PgBouncer and ``DATABASE_DIRECT_URL`` at PostgreSQL itself, as in a pooled
deployment (docs/deployment.md): consecutive transactions of one connection may run on different server
sessions, so a statement prepared, a session lock taken or a setting made on one would be missing on the next,
and a test relying on one fails. The PostgreSQL is a server of the run's own (an embedded one in a temporary
directory under var/), or the server of ``DATABASE_URL`` when it is set. The AMQP tests are skipped here.

Django cannot drop its test database through the pooler, which keeps server connections to it: the database
is created by the test run (``--reuse-db`` never drops it) and dropped here, directly, before and after.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import environ
import psycopg

from foundation.env import VAR_DIR
from scripts.pgbouncer import PgBouncer

# What behaves differently behind a transaction pooler: the claim's prepared statements and their direct
# connections, LISTEN for wake-ups and the relay, the worker protocol's replay store, a database that drops
# connections mid-request, and the pooled mode's own checks. The rest of the suite runs once, unpooled.
POOLED_TESTS = [
    "tests/config/test_pooled_mode.py",
    "tests/foundation/test_prepared_lending.py",
    "tests/foundation/test_direct_database.py",
    "tests/processing/protocol",
    "tests/processing/submission",
    "tests/processing/queue",
    "tests/processing/relay",
    "tests/processing/e2e/test_claims_behind_a_pooler.py",
    "tests/processing/e2e/test_conformance.py",
    "tests/processing/e2e/test_faults.py",
]
DATABASE = "quire_pooled"


@contextmanager
def _postgres():
    """Host, port, user and password of the PostgreSQL the tests use: ``DATABASE_URL``'s, or a server of this
    run's own, so that make test's soak, which restarts the checkout's server meanwhile, does not cut it."""
    if url := os.environ.get("DATABASE_URL"):
        config = environ.Env.db_url_config(url)
        yield {key: config.get(key.upper()) or default for key, default in _DEFAULTS.items()}
        return
    from config.embedded_db import ensure_running, stop

    root = Path(tempfile.mkdtemp(prefix="quire-pooled-postgres-", dir=VAR_DIR))
    root.chmod(0o755)  # as root, the server runs as a user of its own, which must reach its data directory
    try:
        yield {**_DEFAULTS, "host": ensure_running(root).socket_dir}
    finally:
        stop(root / "pgdata")
        shutil.rmtree(root, ignore_errors=True)


_DEFAULTS = {"host": "127.0.0.1", "port": 5432, "user": "postgres", "password": ""}


def _drop_test_database(postgres: dict) -> None:
    """The test database, and each pytest-xdist worker's (``test_quire_pooled_gw0`` …)."""
    params = {key: value for key, value in postgres.items() if value != ""}
    with psycopg.connect(**params, dbname="postgres", autocommit=True) as conn:
        names = conn.execute(
            "SELECT datname FROM pg_database WHERE datname = %s OR datname LIKE %s",
            [f"test_{DATABASE}", f"test_{DATABASE}\\_gw%"],
        ).fetchall()
        for (name,) in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main(arguments: list[str]) -> int:
    with _postgres() as postgres:
        return _pooled_run(postgres, arguments)


def _pooled_run(postgres: dict, arguments: list[str]) -> int:
    direct = f"postgresql://{postgres['user']}:{postgres['password']}@/{DATABASE}?host={postgres['host']}"
    if not postgres["host"].startswith("/"):
        direct = (
            f"postgresql://{postgres['user']}:{postgres['password']}@{postgres['host']}:{postgres['port']}/{DATABASE}"
        )
    _drop_test_database(postgres)
    with tempfile.TemporaryDirectory(prefix="quire-pgbouncer-") as run_dir:
        bouncer = PgBouncer(Path(run_dir), backend_host=postgres["host"], backend_port=int(postgres["port"]))
        try:
            with bouncer:
                url = bouncer.url(DATABASE, user=postgres["user"])
                print(f"pooled tests: DATABASE_URL={url} (PgBouncer, transaction mode), DATABASE_DIRECT_URL={direct}")
                # Publishing to RabbitMQ is the same behind a pooler (the relay's claims, which are not, run with
                # NOTIFY too), and make test's soak stops and starts RabbitMQ meanwhile.
                environment = {**os.environ, "DATABASE_URL": url, "DATABASE_DIRECT_URL": direct, "AMQP_URL": ""}
                workers = os.environ.get("TEST_WORKERS", "4")
                command = [sys.executable, "-m", "pytest", "--reuse-db", "-p", "no:cacheprovider"]
                command += ["-n", workers, "--dist", "loadgroup", "-m", "not exclusive and not restarts_postgres"]
                paths = [] if any(not argument.startswith("-") for argument in arguments) else POOLED_TESTS
                returncode = subprocess.call([*command, *arguments, *paths], env=environment)
                if returncode:
                    print("PgBouncer's log, last lines:", *bouncer.log_tail(40), sep="\n")
                return returncode
        finally:
            _drop_test_database(postgres)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
