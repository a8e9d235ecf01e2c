"""`make soak`: Quire under steady load while its parts are killed, then the invariant checker.

Runs in its own database: the web server (gunicorn, 2 workers), two agents (4 slots, test.echo/v1 and
LaTeX builds), the maintenance loop and the outbox relay to RabbitMQ (or PostgreSQL NOTIFY when
RabbitMQ is not reachable or ``rabbitmqctl`` is not installed). Simulated users submit echo jobs
steadily and LaTeX builds now and then, retrying with the same Idempotency-Key when a request fails.
Meanwhile, every 20 to 50 s (a sixth to a third of the soak at most, so that make test's one-minute soak
meets several faults too): kill -9 an agent (and restart it), kill -9 a web worker, kill -9 the
outbox relay (and restart it), restart PostgreSQL, stop and start RabbitMQ. At the end the load stops,
the reapers drain the system, and ``processing_check`` must pass.

Killing the relay can land between the broker's confirm and the relay recording it: the event is
published again once its claim lease passes. Delivery is at least once and consumers recognise
duplicates by ``event_id``; the checker reads the database, where such an event is simply dispatched.

SOAK_MINUTES (default 10), SOAK_SEED (default: time), SOAK_USERS (4), SOAK_ECHO_PER_S (6).
Exit status 0 only when jobs were accepted, the checker's verdict is clean and every accepted job is terminal.
"""

import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback
import urllib.error
import urllib.request
import uuid
from collections import Counter
from pathlib import Path

from scripts.bench.harness import ROOT, bench_database, django_setup, percentile
from scripts.bench.processes import deployment_write, web_server

MINUTES = float(os.environ.get("SOAK_MINUTES", "10"))
FAULT_PAUSE_SECONDS = (min(20.0, MINUTES * 10), min(50.0, MINUTES * 20))  # between two faults
SEED = int(os.environ.get("SOAK_SEED", str(int(time.time()))))
USERS = int(os.environ.get("SOAK_USERS", "4"))
ECHO_PER_S = float(os.environ.get("SOAK_ECHO_PER_S", "6"))
OPERATIONS = ["test.echo/v1", "latex.compile.pdf/v1"]
LIMITS = {"lease_seconds": 10, "session_ttl_seconds": 15, "max_attempts": 5, "queued_jobs_global": 100_000,
          "active_jobs_per_requester": 10_000, "active_jobs_per_project": 10_000, "running_jobs_per_requester": 8,
          "running_jobs_per_project": 8}  # fmt: skip
AMQP = os.environ.get("AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/%2F")


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = Counter()
        self.jobs: set[str] = set()
        self.deaths: list[str] = []  # a user thread that raised: the soak stopped loading the system

    def add(self, key: str, job_id: str | None = None) -> None:
        with self.lock:
            self.counts[key] += 1
            if job_id:
                self.jobs.add(job_id)


def _rabbit_up() -> bool:
    """RabbitMQ runs here and ``rabbitmqctl`` can bounce it; otherwise the soak uses NOTIFY."""
    if shutil.which("rabbitmqctl") is None:
        return False
    return subprocess.run(["rabbitmqctl", "-q", "status"], capture_output=True).returncode == 0


class Fleet:
    """The background processes, restartable by name."""

    def __init__(self, url: str, directory: Path, env: dict[str, str]):
        self.url, self.directory, self.env = url, directory, {**os.environ, **env}
        self.processes: dict[str, subprocess.Popen] = {}

    def _command(self, name: str) -> list[str]:
        if name.startswith("agent"):
            return [
                sys.executable,
                "-m",
                "quire_worker",
                "--core-url",
                self.url,
                "--token-file",
                str(self.directory / "worker.token"),
                "--instance",
                name,
                "--slots",
                "4",
                "--test-operations",
                "--operations",
                ",".join(OPERATIONS),
                "--work-dir",
                str(self.directory / f"{name}-work"),
            ]
        if name == "maintenance":
            return [sys.executable, "manage.py", "processing_maintain", "--interval", "2"]
        return [sys.executable, "manage.py", "outbox_relay", "--idle", "0.5"]

    def start(self, name: str) -> None:
        log = open(self.directory / f"{name}.log", "ab")  # noqa: SIM115  the process owns it until it ends
        env = {**self.env, "QUIRE_LOG_LEVEL": "INFO"} if name.startswith("agent") else self.env  # claims' story
        self.processes[name] = subprocess.Popen(
            self._command(name), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def kill(self, name: str) -> None:
        process = self.processes[name]
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()

    def stop_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)


class Refused(Exception):
    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


def _user_call(url: str, token: str, method: str, path: str, body: bytes, headers: dict) -> tuple[dict, bytes]:
    """One API call as a user's client makes it: retried on connection errors and 5xx for up to two minutes (the
    chaos kills web workers and the database), a 4xx raised as Refused with its error code."""
    deadline = time.monotonic() + 120
    while True:
        request = urllib.request.Request(  # noqa: S310  the soak's own server
            url + path, data=body, method=method, headers={**headers, "Authorization": f"Bearer {token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310  the soak's own server
                return dict(response.headers), response.read()
        except urllib.error.HTTPError as exc:
            if exc.code < 500:
                raise Refused(json.loads(exc.read() or b"{}").get("code", str(exc.code))) from exc
        except (OSError, http.client.HTTPException):
            pass
        if time.monotonic() > deadline:
            raise Refused("unavailable")
        time.sleep(0.2)


def _user_loop(
    url: str, token: str, echo_project: str, latex_project: str, stop: threading.Event, tally: Tally, rng: random.Random
) -> None:
    """A user submitting until the soak ends; if it dies, the tally says how, and the soak fails."""
    try:
        _submit_until_stopped(url, token, echo_project, latex_project, stop, tally, rng)
    except Exception:  # whatever killed it is the report's to show
        with tally.lock:
            tally.deaths.append(traceback.format_exc())


def _submit_until_stopped(
    url: str, token: str, echo_project: str, latex_project: str, stop: threading.Event, tally: Tally, rng: random.Random
) -> None:
    while not stop.is_set():
        stop.wait(rng.expovariate(ECHO_PER_S / USERS))
        latex = rng.random() < 0.08
        key = uuid.uuid4().hex
        try:
            if latex:
                edit = f"% soak {key}\n".encode() + b"\\documentclass{article}\\begin{document}Soak.\\end{document}\n"
                _user_call(
                    url,
                    token,
                    "PUT",
                    f"/v1/projects/{latex_project}/files/main.tex",
                    edit,
                    {"Content-Type": "text/plain"},
                )
            path = f"/v1/projects/{latex_project}/builds" if latex else f"/v1/projects/{echo_project}/test-echo"
            submit_headers = {"Content-Type": "application/json", "Idempotency-Key": key}
            headers, body = _user_call(url, token, "POST", path, b"{}", submit_headers)
            tally.add("replayed" if headers.get("Idempotent-Replayed") else "accepted", json.loads(body)["id"])
        except Refused as exc:
            tally.add(f"refused:{exc.code}")


def _chaos(fleet: Fleet, stop: threading.Event, rng: random.Random, log: list[str]) -> None:
    from config.embedded_db import restart

    actions = ["kill_agent", "kill_web_worker", "kill_relay"]
    if not os.environ.get("BENCH_DATABASE_URL"):  # only the checkout's own PostgreSQL is restarted
        actions.append("restart_postgres")
    if fleet.env.get("OUTBOX_BROKER_URL", "").startswith("amqp"):
        actions.append("bounce_rabbitmq")
    while not stop.wait(rng.uniform(*FAULT_PAUSE_SECONDS)):
        action = rng.choice(actions)
        log.append(f"{time.strftime('%H:%M:%S')} {action}")
        if action in ("kill_agent", "kill_relay"):
            name = rng.choice(["agent-a", "agent-b"]) if action == "kill_agent" else "relay"
            fleet.kill(name)
            stop.wait(rng.uniform(1, 5))
            fleet.start(name)
        elif action == "kill_web_worker":
            workers = subprocess.run(
                ["pgrep", "-P", str(fleet.web_master), "-f", "gunicorn"], capture_output=True, text=True
            ).stdout.split()
            if workers:
                os.kill(int(rng.choice(workers)), signal.SIGKILL)  # gunicorn starts a new one
        elif action == "restart_postgres":
            restart(ROOT / "var" / "pgdata")
        elif action == "bounce_rabbitmq":
            subprocess.run(["rabbitmqctl", "-q", "stop_app"], capture_output=True)
            stop.wait(rng.uniform(3, 12))
            subprocess.run(["rabbitmqctl", "-q", "start_app"], capture_output=True)


def _drained(job_ids: set[str], timeout: float) -> bool:
    from django.db import connection

    from processing.models import OutboxEvent, ProcessingJob

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            busy = ProcessingJob.objects.filter(pk__in=job_ids).active().exists()
            pending = OutboxEvent.objects.filter(dispatched_at__isnull=True).exists()
            if not busy and not pending:
                return True
        except Exception:  # the database may be coming back from a restart
            connection.close()
        time.sleep(1)
    return False


def _diagnose(fleet: "Fleet", tally: Tally) -> None:
    """When the system did not drain: which processes died, what is stuck, and the logs' last lines."""
    from django.db import connection
    from django.db.models import Count

    from processing.models import AttemptState, ProcessingAttempt, ProcessingJob, WorkerSession

    for name, process in fleet.processes.items():
        print(f"  process {name:<12} {'alive' if process.poll() is None else f'exited {process.returncode}'}")
    stuck = ProcessingJob.objects.filter(pk__in=tally.jobs).active()
    print(f"  stuck by state/operation {list(stuck.values_list('state', 'operation').annotate(n=Count('pk')))}")
    running = ProcessingAttempt.objects.filter(state=AttemptState.RUNNING).select_related("session")
    for attempt in running[:10]:
        print(
            f"  running attempt {attempt.job_id} #{attempt.number} lease {attempt.lease_expires_at} "
            f"session {attempt.session.instance if attempt.session else None}"
        )
    for session in WorkerSession.objects.order_by("-registered_at")[:6]:
        print(
            f"  session {session.instance} {session.state} expires {session.expires_at} "
            f"heartbeat {session.last_heartbeat_at}"
        )
    for attempt in ProcessingAttempt.objects.order_by("-started_at").select_related("session")[:12]:
        print(
            f"  recent attempt {attempt.claim_id} {attempt.state} started {attempt.started_at} "
            f"ended {attempt.ended_at} session {attempt.session.instance if attempt.session else None}"
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid, state, now() - xact_start, left(query, 100) FROM pg_stat_activity "
            "WHERE datname = current_database() AND xact_start < now() - interval '5 seconds'"
        )
        for row in cursor.fetchall():
            print(f"  long transaction {row}")
    for name, process in fleet.processes.items():
        if name.startswith("agent") and process.poll() is None:
            os.kill(process.pid, signal.SIGUSR1)  # the agents write every thread's stack to their log
    time.sleep(1)
    for log in sorted(fleet.directory.glob("*.log")):
        print(f"  --- {log.name} (last lines)")
        lines = 80 if log.name.startswith("agent") else 8
        for line in log.read_text(errors="replace").splitlines()[-lines:]:
            print(f"    {line[:200]}")


def _report(tally: Tally, chaos_log: list[str], drained: bool, verdict: subprocess.CompletedProcess) -> bool:
    from django.db.models import Count

    from processing.models import AttemptState, OutboxEvent, ProcessingAttempt, ProcessingJob

    jobs = ProcessingJob.objects.filter(pk__in=tally.jobs)
    states = dict(jobs.values_list("state").annotate(n=Count("pk")).order_by())
    failures = dict(jobs.filter(state="failed").values_list("failure_class").annotate(n=Count("pk")).order_by())
    finished = jobs.filter(state="succeeded").values_list("created_at", "completed_at")
    latencies = [(done - created).total_seconds() * 1000 for created, done in finished]
    lost = ProcessingAttempt.objects.filter(job__in=jobs, state=AttemptState.LOST).count()
    retried = jobs.filter(attempt_count__gt=1).count()
    # A soak that loaded the system too little proved little: at least half the jobs its users' rate implies
    # (the chaos stops the web server now and then; submissions are a Poisson process).
    expected = ECHO_PER_S * MINUTES * 60
    loaded = len(tally.jobs) >= expected / 2 and not tally.deaths
    clean = drained and verdict.returncode == 0 and loaded
    print(f"\nSoak report (seed {SEED}, {MINUTES:g} min)")
    print(f"  faults injected         {len(chaos_log)}: " + ", ".join(line.split()[1] for line in chaos_log))
    print(f"  jobs accepted           {len(tally.jobs)} (the users' rate implies about {expected:.0f})")
    print(f"  succeeded               {states.get('succeeded', 0)}")
    print(f"  failed                  {states.get('failed', 0)}")
    print(f"  by state                {states}")
    print(f"  failed by class         {failures}")
    print(f"  retried (>1 attempt)    {retried}")
    print(f"  lost leases             {lost}")
    print(f"  duplicates prevented    {tally.counts['replayed']} (idempotent replays)")
    print(f"  refused submissions     {sum(v for k, v in tally.counts.items() if k.startswith('refused'))}")
    reclaimed = OutboxEvent.objects.filter(attempts__gt=1).count()
    print(f"  outbox events retried   {reclaimed} (claimed more than once: a consumer may see them twice)")
    print(
        f"  end-to-end latency      p50 {percentile(latencies, 0.5):.0f} ms, p99 {percentile(latencies, 0.99):.0f} ms"
    )
    print(f"  user threads died       {len(tally.deaths)}")
    for death in tally.deaths:
        print("    " + death.strip().replace("\n", "\n    "))
    print(f"  loaded enough           {loaded}")
    print(f"  drained                 {drained}")
    print(f"  checker verdict         {'clean' if verdict.returncode == 0 else 'VIOLATIONS'}")
    print("  " + verdict.stdout.strip().replace("\n", "\n  "))
    return clean


def _web_master() -> int:
    """The pid of this soak's gunicorn master: our own child, never another gunicorn on the machine."""
    found = subprocess.run(
        ["pgrep", "-P", str(os.getpid()), "-f", "config.asgi:application"], capture_output=True, text=True
    ).stdout.split()
    if len(found) != 1:
        raise RuntimeError(f"expected one web server started by this soak, found {found}")
    return int(found[0])


def main() -> int:
    rng = random.Random(SEED)
    directory = ROOT / "var" / "soak" / f"{time.strftime('%Y%m%d-%H%M%S')}-seed{SEED}"
    directory.mkdir(parents=True)
    print(f"Logs in {directory}")
    with bench_database("quire_soak") as database_url:
        deployment = str(deployment_write(directory, operations=OPERATIONS, limits=LIMITS))
        broker = AMQP if _rabbit_up() else ""
        env = {
            "QUIRE_DEPLOYMENT_FILE": deployment,
            "QUIRE_TEST_OPERATIONS": "true",
            "DEBUG": "false",
            "QUIRE_LOG_LEVEL": "WARNING",
            "OFFICE_WARM_ON_START": "false",
            "OUTBOX_BROKER_URL": broker,
            "QUIRE_STORAGE_DIR": str(directory / "storage"),
        }
        os.environ.update(env)
        django_setup()
        from django.contrib.auth import get_user_model

        from access.services import token_create
        from workspace import services as workspace

        with web_server(env, workers=2, log=directory / "web.log") as url:
            fleet = Fleet(url, directory, env)
            fleet.web_master = _web_master()
            for name in ("agent-a", "agent-b", "maintenance", "relay"):
                fleet.start(name)
            tally, stop, chaos_log = Tally(), threading.Event(), []
            users = []
            for index in range(USERS):
                user = get_user_model().objects.create_user(username=f"soak{index}", password="x" * 12)
                echo = workspace.project_create(actor_id=user.pk, name="echo", project_type="latex", starter=True)
                latex = workspace.project_create(actor_id=user.pk, name="paper", project_type="latex", starter=True)
                token = token_create(user_id=user.pk, name="soak")[1]
                arguments = (url, token, str(echo.pk), str(latex.pk), stop, tally, random.Random(rng.random()))
                users.append(threading.Thread(target=_user_loop, args=arguments))
            chaos = threading.Thread(target=_chaos, args=(fleet, stop, random.Random(rng.random()), chaos_log))
            print(f"Soaking for {MINUTES:g} min (seed {SEED}, broker {'RabbitMQ' if broker else 'NOTIFY'})", flush=True)
            for thread in [*users, chaos]:
                thread.start()
            time.sleep(MINUTES * 60)
            stop.set()
            for thread in [*users, chaos]:
                thread.join()
            if broker:  # a bounce may have been cut short by the end of the load
                subprocess.run(["rabbitmqctl", "-q", "start_app"], capture_output=True)
            for name in ("agent-a", "agent-b", "relay"):
                if fleet.processes[name].poll() is not None:
                    fleet.start(name)
            drained = _drained(tally.jobs, timeout=float(os.environ.get("SOAK_DRAIN_SECONDS", "300")))
            verdict = subprocess.run(
                [sys.executable, "manage.py", "processing_check", "--slack", "30"],
                cwd=ROOT,
                env={**os.environ, "DATABASE_URL": database_url},
                capture_output=True,
                text=True,
            )
            if not drained:
                _diagnose(fleet, tally)
            fleet.stop_all()
            return 0 if _report(tally, chaos_log, drained, verdict) else 1


if __name__ == "__main__":
    sys.exit(main())
