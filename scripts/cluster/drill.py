"""``make cluster-drill``: the cluster under a bounded load of mixed work while it loses a Core replica, an
agent and the pooler's connections; then what was promised is checked in the database.

Load, through HAProxy over TLS as API clients send it, each submission retried with its Idempotency-Key
until answered: echo jobs, LaTeX builds (each of an edit of its own, so none is reused), PDFs added to a
project's library (an indexing job each) and Office previews. Meanwhile: SIGKILL the web server of one Core
host and one agent host's agent, start them again, restart PgBouncer, and kill and restart HAProxy.
Afterwards:

- every accepted job is terminal, and succeeded (every input is valid: a fault must not fail a job), and
  every Office preview was answered;
- none ran its publication twice: one delivered attempt per succeeded job, one terminal event per job in
  the outbox;
- no Idempotency-Key produced two jobs: every answer for a key named the same job, and the database holds
  one job per key;
- the outbox relay delivered every event (none left undispatched);
- ``processing_check`` finds nothing wrong;
- two editors of one document, their WebSockets on different replicas, see each other's typing.

DRILL_SUBMISSIONS (default 160) and DRILL_SECONDS (default 40) bound the load.
Exit status 0 only when every check holds.
"""

import json
import os
import random
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections import Counter, defaultdict

from foundation.env import VAR_DIR
from scripts.cluster import network
from scripts.cluster.topology import AGENTS, CORES, DEMO_USER, PROXY, PYTHON, ROOT, Cluster

SUBMISSIONS = int(os.environ.get("DRILL_SUBMISSIONS", "160"))
SECONDS = float(os.environ.get("DRILL_SECONDS", "40"))
CLIENTS = 6
KINDS = ["echo"] * 14 + ["latex"] * 2 + ["library"] * 2 + ["preview"] * 2


class Client:
    """An API client through the proxy: retried on connection errors, 5xx and 429 for up to three minutes."""

    def __init__(self, cluster: Cluster, token: str):
        self.base = cluster.url.rstrip("/")
        self.token = token
        self.tls = ssl.create_default_context(cafile=str(cluster.ca_file))
        self.retries = Counter()

    def call(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
        deadline = time.monotonic() + 180
        while True:
            request = urllib.request.Request(  # noqa: S310  https to the cluster's proxy only
                self.base + path,
                data=body,
                method=method,
                headers={**(headers or {}), "Authorization": f"Bearer {self.token}"},
            )
            try:
                with urllib.request.urlopen(request, timeout=60, context=self.tls) as response:  # noqa: S310
                    return response.status, dict(response.headers), response.read()
            except urllib.error.HTTPError as exc:
                if exc.code < 500 and exc.code != 429:
                    raise RuntimeError(f"{method} {path}: {exc.code} {exc.read()[:300]!r}") from exc
                self.retries[f"http {exc.code}"] += 1
            except OSError as exc:
                self.retries[type(exc).__name__] += 1
            if time.monotonic() > deadline:
                raise RuntimeError(f"{method} {path}: no answer in three minutes")
            time.sleep(0.25)

    def json(self, method: str, path: str, payload=None, headers=None) -> dict:
        body = None if payload is None else json.dumps(payload).encode()
        _, _, data = self.call(method, path, body, {"Content-Type": "application/json", **(headers or {})})
        return json.loads(data)


class Load:
    def __init__(self, client: Client, projects: dict[str, str], rng: random.Random):
        self.client, self.projects, self.rng = client, projects, rng
        self.lock = threading.Lock()
        self.jobs_by_key: dict[str, set[str]] = defaultdict(set)
        self.kinds = Counter()
        self.previews = Counter()
        self.errors: list[str] = []

    def submit(self, kind: str) -> None:
        key = uuid.uuid4().hex
        try:
            if kind == "preview":
                status, _, _ = self.client.call(
                    "GET", f"/v1/projects/{self.projects['office']}/files/brief.docx/preview.pdf"
                )
                with self.lock:
                    self.previews["answered" if status == 200 else f"status {status}"] += 1
                return
            # Each submission is sent twice with its key (a client that lost the first answer): one job.
            for _ in range(2):
                job_id = self._submitted(kind, key)
                with self.lock:
                    self.jobs_by_key[key].add(job_id)
            with self.lock:
                self.kinds[kind] += 1
        except Exception as exc:  # the report shows it, and the drill fails
            with self.lock:
                self.errors.append(f"{kind}: {exc}")

    def _submitted(self, kind: str, key: str) -> str:
        headers = {"Idempotency-Key": key}
        if kind == "echo":
            return self.client.json("POST", f"/v1/projects/{self.projects['echo']}/test-echo", {}, headers)["id"]
        if kind == "latex":
            project = self.projects["latex"]
            if not self.jobs_by_key.get(key):  # the edit is made once; the retry resubmits the same command
                edit = f"% drill {key}\n\\documentclass{{article}}\\begin{{document}}Drill {key}.\\end{{document}}\n"
                self.client.call(
                    "PUT", f"/v1/projects/{project}/files/main.tex", edit.encode(), {"Content-Type": "text/plain"}
                )
            return self.client.json("POST", f"/v1/projects/{project}/builds", {}, headers)["id"]
        from tests.library.pdfs import text_pdf

        pdf = text_pdf([f"Drill report {key}", "Cluster failover notes."])  # the same bytes on the retry
        _, _, body = self.client.call(
            "POST",
            f"/v1/projects/{self.projects['library']}/library?filename=drill-{key[:8]}.pdf",
            pdf,
            {**headers, "Content-Type": "application/pdf"},
        )
        return json.loads(body)["job"]["id"]


def _projects(client: Client) -> dict[str, str]:
    from tests.office.documents import docx_with

    created = {}
    for name in ("echo", "latex", "library", "office"):
        created[name] = client.json(
            "POST", "/v1/projects", {"name": f"Drill {name}", "type": "latex", "starter": True}
        )["id"]
    client.call(
        "PUT",
        f"/v1/projects/{created['office']}/files/brief.docx",
        docx_with(["cluster", "drill", "brief"], paragraphs=3),
        {"Content-Type": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    )
    return created


def _faults(cluster: Cluster, started: float, log: list[str], stop: threading.Event) -> None:
    """The faults, at fixed points of the load: a replica and an agent killed and brought back, the pooler
    restarted."""
    core, agent = CORES[0], AGENTS[0]

    def at(seconds: float, what: str, action) -> bool:
        if stop.wait(max(0.0, started + seconds - time.monotonic())):
            return False
        action()
        log.append(f"t={time.monotonic() - started:5.1f}s {what}")
        return True

    steps = [
        (
            SECONDS * 0.2,
            f"SIGKILL the web server of {core.name} (all its processes)",
            cluster.members[f"{core.name}-web"].kill,
        ),
        (SECONDS * 0.2 + 0.5, f"SIGKILL the agent on {agent.name}", cluster.members[agent.name].kill),
        (SECONDS * 0.35, f"start the web server of {core.name} again", lambda: cluster.core_restart(core)),
        (SECONDS * 0.4, f"start the agent on {agent.name} again", lambda: cluster.agent_restart(agent)),
        (SECONDS * 0.6, "restart PgBouncer (every pooled connection cut)", cluster.pgbouncer.restart),
        (SECONDS * 0.75, "SIGKILL HAProxy and start it again (every client connection cut)", cluster.proxy_restart),
    ]
    for seconds, what, action in steps:
        if not at(seconds, what, action):
            return


def _editors_on_two_replicas(cluster: Cluster, project_id: str) -> tuple[bool, str]:
    """Two editors of one document whose WebSockets the proxy gave to different replicas see each other's
    typing: live editing needs no sticky sessions."""
    import asyncio

    from django.contrib.auth import get_user_model
    from django.test import Client as DjangoClient

    from collaboration.live.client import LiveClient
    from workspace.models import ProjectFile

    browser = DjangoClient()
    browser.force_login(get_user_model().objects.get(username=DEMO_USER))
    cookie = browser.cookies["sessionid"].value
    file = ProjectFile.objects.get(project_id=project_id, path="main.tex")
    url = f"wss://{PROXY.address}/ws/projects/{project_id}/documents/{file.pk}"
    tls = ssl.create_default_context(cafile=str(cluster.ca_file))

    async def edit_together() -> tuple[bool, str]:
        editors = {}
        for _ in range(6):  # round robin among other traffic: connect until two replicas hold one each
            editor = await LiveClient(url, cookie, f"https://{PROXY.address}", tls=tls).open()
            replica = editor.response_headers.get("X-Quire-Replica")
            if replica in editors:
                await editor.close()
                continue
            editors[replica] = editor
            if len(editors) == 2:
                break
        if len(editors) < 2:
            return False, f"every editor landed on {sorted(editors)}"
        (first_replica, first), (second_replica, second) = editors.items()
        await asyncio.wait_for(asyncio.gather(first.synced.wait(), second.synced.wait()), 10)
        first.insert(0, f"% typed on {first_replica}\n")
        second.insert(len(second.text), f"% typed on {second_replica}\n")
        await second.wait_until(lambda: f"typed on {first_replica}" in second.text)
        await first.wait_until(lambda: f"typed on {second_replica}" in first.text)
        same = first.text == second.text
        await first.close(), await second.close()
        return same, f"{first_replica} and {second_replica}"

    try:
        return asyncio.run(edit_together())
    except (AssertionError, TimeoutError, OSError) as exc:
        return False, f"{type(exc).__name__}: {exc}"


def _django(cluster: Cluster) -> None:
    os.environ.update(cluster.core_env(direct=True))
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()


def _settled(job_ids: set[str], timeout: float) -> tuple[bool, bool]:
    """(every job terminal, every outbox event dispatched), waiting up to ``timeout``."""
    from processing.models import OutboxEvent, ProcessingJob

    deadline = time.monotonic() + timeout
    while True:
        terminal = not ProcessingJob.objects.filter(pk__in=job_ids).active().exists()
        dispatched = not OutboxEvent.objects.filter(dispatched_at__isnull=True).exists()
        if (terminal and dispatched) or time.monotonic() > deadline:
            return terminal, dispatched
        time.sleep(1)


def _findings(load: Load, cluster: Cluster) -> list[tuple[bool, str]]:
    from django.db.models import Count, Q

    from processing.kernel.transitions import EVENT_KINDS
    from processing.models import AttemptState, OutboxEvent, ProcessingAttempt, ProcessingJob

    job_ids = {job for jobs in load.jobs_by_key.values() for job in jobs}
    terminal, dispatched = _settled(job_ids, timeout=240)
    jobs = ProcessingJob.objects.filter(pk__in=job_ids)
    states = Counter(jobs.values_list("state", flat=True))
    twice_delivered = (
        jobs.filter(state="succeeded")
        .annotate(delivered=Count("attempts", filter=Q(attempts__state=AttemptState.DELIVERED)))
        .exclude(delivered=1)
        .count()
    )
    terminal_events = Counter(
        OutboxEvent.objects.filter(kind__in=EVENT_KINDS.values()).values_list("payload__job_id", flat=True)
    )
    events_twice = sum(1 for job in job_ids if terminal_events.get(job, 0) > 1)
    keys_with_two_jobs = sum(1 for jobs_of_key in load.jobs_by_key.values() if len(jobs_of_key) != 1)
    check = subprocess.run(
        [PYTHON, "manage.py", "processing_check"], cwd=ROOT, env={**os.environ}, capture_output=True, text=True
    )
    previews_answered = load.previews["answered"] == sum(load.previews.values())
    attempts = Counter(
        ProcessingAttempt.objects.filter(job_id__in=job_ids)
        .exclude(state=AttemptState.DELIVERED)
        .values_list("state", flat=True)
    )
    print(f"jobs accepted: {len(job_ids)} ({dict(load.kinds)}); states: {dict(states)}")
    print(f"attempts the faults cut short (their jobs ran again): {dict(attempts) or 'none'}")
    for job in jobs.exclude(state="succeeded").values("id", "operation", "state", "failure_class", "failure_code"):
        failure = f"{job['failure_class']}/{job['failure_code']}"
        print(f"  not succeeded: {job['operation']} {job['id']} {job['state']} {failure}")
    print(f"previews: {dict(load.previews)}; client retries through the faults: {dict(load.client.retries)}")
    if check.returncode:
        print(check.stdout[-3000:], check.stderr[-3000:])
    return [
        (not load.errors, f"every submission was answered ({len(load.errors)} were not: {load.errors[:3]})"),
        (terminal, "every accepted job is terminal"),
        (states == {"succeeded": len(job_ids)}, "every job succeeded: no fault failed one (their inputs are valid)"),
        (previews_answered and bool(load.previews), "every Office preview was answered with its PDF"),
        (twice_delivered == 0, f"one delivered attempt per succeeded job ({twice_delivered} had another count)"),
        (events_twice == 0, f"one terminal event per job in the outbox ({events_twice} had more)"),
        (keys_with_two_jobs == 0, f"one job per Idempotency-Key in every answer ({keys_with_two_jobs} keys had two)"),
        (
            jobs.count() == len(load.jobs_by_key),
            f"one job per key in the database ({jobs.count()} jobs, {len(load.jobs_by_key)} keys)",
        ),
        (dispatched, "the outbox relay delivered every event"),
        (check.returncode == 0, "processing_check is clean"),
    ]


def main() -> int:
    if problem := network.need_root():
        print(f"cluster drill skipped: {problem}")
        return 0
    cluster = Cluster(VAR_DIR / "cluster-drill")
    try:
        cluster.start()
        _django(cluster)
        token = (
            subprocess.run(
                [PYTHON, "manage.py", "create_api_token", "demo", "--name", "drill"],
                cwd=ROOT,
                env={**os.environ},
                capture_output=True,
                text=True,
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        client = Client(cluster, token)
        load = Load(client, _projects(client), random.Random(int(os.environ.get("DRILL_SEED", "28"))))
        print(f"load: {SUBMISSIONS} submissions over {SECONDS:.0f} s from {CLIENTS} clients through {cluster.url}")
        fault_log: list[str] = []
        stop = threading.Event()
        started = time.monotonic()
        faults = threading.Thread(target=_faults, args=(cluster, started, fault_log, stop))
        faults.start()
        _run_load(load, started)
        faults.join()
        print("faults:", *fault_log, sep="\n  ")
        findings = _findings(load, cluster)
        together, replicas = _editors_on_two_replicas(cluster, load.projects["echo"])
        findings.append((together, f"two editors of one document on different replicas ({replicas}) converged"))
    finally:
        cluster.stop()
    print("found:")
    for held, what in findings:
        print(f"  {'ok  ' if held else 'FAIL'} {what}")
    return 0 if all(held for held, _ in findings) else 1


def _run_load(load: Load, started: float) -> None:
    plan = [load.rng.choice(KINDS) for _ in range(SUBMISSIONS)]
    spacing = SECONDS / SUBMISSIONS
    pending = list(enumerate(plan))
    lock = threading.Lock()

    def client_loop():
        while True:
            with lock:
                if not pending:
                    return
                index, kind = pending.pop(0)
            delay = started + index * spacing - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            load.submit(kind)

    threads = [threading.Thread(target=client_loop) for _ in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


if __name__ == "__main__":
    sys.exit(main())
