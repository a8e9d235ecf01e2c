"""`make bench-load`: the submission rate the whole system sustains with end-to-end p99 under 2 s.

The API (gunicorn, 2 workers), two agents of 4 slots and PostgreSQL share this machine. An open-loop
generator submits ``test.echo/v1`` jobs over HTTP at a fixed rate for BENCH_SECONDS (default 15) per
step; end-to-end latency is each job's ``completed_at - created_at`` in the database. A rate is
sustained when every submission is accepted, every job finishes within the step plus 5 s and the p99
stays under 2 s. Latency runs from the moment a submission was due (open loop: a slow server does not
slow the arrivals); a submission the API refused (429, 503, timeout after the client's retries) counts
as infinitely late.

  load_sustained_jobs_per_s       the highest sustained rate found (stepping up by 1.5x from BENCH_START_RATE,
                                  default 4, and never beyond BENCH_MAX_RATE, default none: a smoke run's cap)
  load_e2e_ms_p99_at_<pct>pct     p99 at 10%, 25%, 50%, 75% and 100% of it

Each figure is the median of BENCH_REPS repetitions, with min–max; for the sustained rate a repetition is
a whole ramp.
"""

import json
import os
import statistics
import tempfile
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, percentile, report

ECHO = "test.echo/v1"
SECONDS = float(os.environ.get("BENCH_SECONDS", "15"))
MAX_RATE = float(os.environ.get("BENCH_MAX_RATE", "inf"))
RATE_STEP = float(os.environ.get("BENCH_RATE_STEP", "1.5"))  # a finer step (1.1) tells two close arms apart
# The shares of the sustained rate whose p99 is measured; BENCH_LOAD_SHARES="" measures the sustained rate only.
SHARES = [float(s) for s in os.environ.get("BENCH_LOAD_SHARES", "0.1,0.25,0.5,0.75,1.0").split(",") if s]
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


def _submit(url: str, token: str, project_id) -> str:
    """One submission; returns the job id, or raises when the API refused it even after the client's retries."""
    from quire_worker.client import HttpCoreClient

    client = HttpCoreClient(url, token, retry_deadline=30)
    body = client._call(
        "POST", f"/v1/projects/{project_id}/test-echo", body=b"", headers={"Idempotency-Key": uuid.uuid4().hex}
    )
    return json.loads(body)["id"]


@dataclass(frozen=True)
class Step:
    sustained: bool
    p99_ms: float
    submitted: int
    refused: int
    refusal: str = ""  # the first refusal's error: a client bug shows here, not as a rate of 0


def step(url: str, token: str, project_id, rate: float) -> Step:
    """Submit at ``rate`` for SECONDS and wait for the jobs; a refused submission makes the step not sustained."""
    from processing.models import ProcessingJob

    due: dict[Future, float] = {}  # each submission and the wall-clock time it was due
    started, wall = time.monotonic(), time.time()
    with ThreadPoolExecutor(max_workers=32) as pool:
        for index in range(max(1, int(rate * SECONDS))):  # at least one: a p99 of no jobs is no figure
            delay = started + index / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            due[pool.submit(_submit, url, token, project_id)] = wall + index / rate
    sent = {future.result(): scheduled for future, scheduled in due.items() if future.exception() is None}
    refused = len(due) - len(sent)
    refusal = next((repr(future.exception()) for future in due if future.exception() is not None), "")
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
    # A refused submission or a job that never finished counts as too slow.
    latencies += [float("inf")] * (len(due) - len(latencies))
    p99 = percentile(latencies, 0.99)
    return Step(finished_in_time and refused == 0 and p99 < P99_TARGET_MS, p99, len(due), refused, refusal)


def _print_step(rate: float, result: Step) -> None:
    verdict = "ok" if result.sustained else "not sustained"
    why = f"  (first refusal: {result.refusal[:200]})" if result.refused else ""
    print(
        f"  {rate:6.1f} jobs/s  p99 {result.p99_ms:8.1f} ms  {result.submitted} jobs  "
        f"{result.refused} refused  {verdict}{why}"
    )


def sustained_rate(url: str, token: str, project_id) -> float:
    """One ramp: step up by BENCH_RATE_STEP (1.5x) from BENCH_START_RATE up to BENCH_MAX_RATE; the last sustained
    rate (0 when none was)."""
    rate, best = float(os.environ.get("BENCH_START_RATE", "4")), 0.0
    while rate <= MAX_RATE:
        result = step(url, token, project_id, rate)
        _print_step(rate, result)
        if not result.sustained:
            return best
        best, rate = rate, rate * RATE_STEP
    return best


def main() -> None:
    from scripts.bench.processes import agents, deployment_write, web_server

    with bench_database() as _, tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        deployment = str(deployment_write(directory, operations=[ECHO], limits=ROOMY))
        os.environ.update(QUIRE_DEPLOYMENT_FILE=deployment, QUIRE_TEST_OPERATIONS="true")
        django_setup()
        env = {
            "QUIRE_DEPLOYMENT_FILE": deployment,
            "QUIRE_TEST_OPERATIONS": "true",
            "DATABASE_POOL": "true",
            "DEBUG": "false",
            "QUIRE_LOG_LEVEL": "WARNING",
            "OFFICE_WARM_ON_START": "false",
        }
        print(f"Load benchmark (test.echo/v1, {SECONDS:.0f} s per step, {BENCH_REPS} repetitions)")
        with web_server(env, workers=2, log=directory / "web.log") as url, agents(url, directory, count=2, slots=4):
            time.sleep(1.5)
            token, project_id = _author(url)
            bests = [sustained_rate(url, token, project_id) for _ in range(BENCH_REPS)]
            best = statistics.median(bests)
            report(
                "load_sustained_jobs_per_s",
                bests,
                unit="jobs/s",
                n=int(best * SECONDS),
                config="API + 2 agents x 4 slots + PostgreSQL on 2 cores, p99 < 2 s, no refusals",
            )
            for share in SHARES:
                rate = max(best * share, 0.5)
                results = [step(url, token, project_id, rate) for _ in range(BENCH_REPS)]
                for result in results:
                    _print_step(rate, result)
                report(
                    f"load_e2e_ms_p99_at_{round(share * 100)}pct",
                    [r.p99_ms for r in results],
                    unit="ms",
                    n=results[0].submitted,
                    config=f"{rate:.1f} jobs/s for {SECONDS:.0f} s",
                )


if __name__ == "__main__":
    main()
