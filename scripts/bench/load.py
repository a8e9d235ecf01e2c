"""`make bench-load`: the submission rate the whole system sustains with end-to-end p99 under 2 s.

The API (gunicorn, 2 workers), two agents of 4 slots and PostgreSQL share this machine. An open-loop
generator submits ``test.echo/v1`` jobs over HTTP at a fixed rate for BENCH_SECONDS (default 15) per
step; end-to-end latency is each job's ``completed_at - created_at`` in the database. A rate is
sustained when every job finishes within the step plus 5 s and the p99 stays under 2 s. Latency runs
from the moment a submission was due (open loop: a slow server does not slow the arrivals).

  load_sustained_jobs_per_s       the highest sustained rate found (stepping up from BENCH_START_RATE)
  load_e2e_ms_p99_at_<pct>pct     p99 at 10%, 25%, 50%, 75% and 100% of it
"""

import json
import os
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from scripts.bench.harness import bench_database, django_setup, percentile, report

ECHO = "test.echo/v1"
SECONDS = float(os.environ.get("BENCH_SECONDS", "15"))
P99_TARGET_MS = 2000
ROOMY = {"running_jobs_per_requester": 1_000_000, "running_jobs_per_project": 1_000_000,
         "active_jobs_per_requester": 1_000_000, "active_jobs_per_project": 1_000_000,
         "queued_jobs_global": 1_000_000}  # fmt: skip


def _author(url: str):
    from django.contrib.auth import get_user_model

    from access.services import token_create
    from workspace import services as workspace

    user = get_user_model().objects.create_user(username=f"load-{uuid.uuid4().hex[:8]}", password="x" * 12)
    project = workspace.project_create(actor_id=user.pk, name="load", project_type="latex", starter=True)
    return token_create(user_id=user.pk, name="load")[1], project.pk


def _submit(url: str, token: str, project_id, scheduled: float, sent: dict, lock: threading.Lock) -> None:
    """One submission; ``scheduled`` is the wall-clock time it was due, the start of its end-to-end latency."""
    from processing.worker.client import HttpCoreClient

    client = HttpCoreClient(url, token, retry_deadline=30)
    _, body = client._call("POST", f"/v1/projects/{project_id}/test-echo", body=b"",
                           headers={"Idempotency-Key": uuid.uuid4().hex})  # fmt: skip
    with lock:
        sent[json.loads(body)["id"]] = scheduled


def step(url: str, token: str, project_id, rate: float) -> tuple[bool, float, int]:
    """Submit at ``rate`` for SECONDS; return (sustained, p99 ms, jobs)."""
    from processing.models import ProcessingJob

    sent: dict[str, float] = {}
    lock = threading.Lock()
    started, wall = time.monotonic(), time.time()
    with ThreadPoolExecutor(max_workers=32) as pool:
        for index in range(int(rate * SECONDS)):
            delay = started + index / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            pool.submit(_submit, url, token, project_id, wall + index / rate, sent, lock)
    ids = list(sent)
    deadline = started + SECONDS + 5
    pending = ProcessingJob.objects.filter(pk__in=ids).exclude(state="succeeded")
    while pending.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    finished_in_time = not pending.exists()
    while pending.exists() and time.monotonic() < deadline + 60:  # let the backlog drain before the next step
        time.sleep(0.2)
    latencies = [
        (done.timestamp() - sent[str(job_id)]) * 1000
        for job_id, done in ProcessingJob.objects.filter(pk__in=ids, state="succeeded").values_list(
            "pk", "completed_at"
        )
    ]
    latencies += [float("inf")] * (len(ids) - len(latencies))  # a job that never finished counts as too slow
    p99 = percentile(latencies, 0.99)
    return finished_in_time and p99 < P99_TARGET_MS, p99, len(ids)


def main() -> None:
    from scripts.bench.processes import agents, deployment_write, web_server

    with bench_database() as _, tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        deployment = str(deployment_write(directory, operations=[ECHO], limits=ROOMY))
        os.environ.update(QUIRE_DEPLOYMENT_FILE=deployment, QUIRE_TEST_OPERATIONS="true")
        django_setup()
        env = {"QUIRE_DEPLOYMENT_FILE": deployment, "QUIRE_TEST_OPERATIONS": "true", "DATABASE_POOL": "true",
               "DEBUG": "false", "QUIRE_LOG_LEVEL": "WARNING", "OFFICE_WARM_ON_START": "false"}  # fmt: skip
        print(f"Load benchmark (test.echo/v1, {SECONDS:.0f} s per step)")
        with web_server(env, workers=2, log=directory / "web.log") as url, \
                agents(url, directory, count=2, slots=4):  # fmt: skip
            time.sleep(1.5)
            token, project_id = _author(url)
            rate, best = float(os.environ.get("BENCH_START_RATE", "4")), 0.0
            while True:
                sustained, p99, jobs = step(url, token, project_id, rate)
                print(f"  {rate:6.1f} jobs/s  p99 {p99:8.1f} ms  {jobs} jobs  {'ok' if sustained else 'not sustained'}")
                if not sustained:
                    break
                best, rate = rate, rate * 1.5
            report("load_sustained_jobs_per_s", [best], unit="jobs/s", n=int(best * SECONDS),
                   config="API + 2 agents x 4 slots + PostgreSQL on 2 cores, p99 < 2 s")  # fmt: skip
            for share in (0.1, 0.25, 0.5, 0.75, 1.0):
                _, p99, jobs = step(url, token, project_id, max(best * share, 0.5))
                report(f"load_e2e_ms_p99_at_{round(share * 100)}pct", [p99], unit="ms", n=jobs,
                       config=f"{best * share:.1f} jobs/s for {SECONDS:.0f} s")  # fmt: skip


if __name__ == "__main__":
    main()
