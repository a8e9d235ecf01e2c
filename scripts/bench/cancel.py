"""Cancel latency for `make bench-latex`: ``POST /v1/processing/jobs/{id}/cancel`` on a running build → ``cancelled``.

Each sample submits a LaTeX build of ``tests/corpora/tex/endless-loop.tex`` (TeX loops until its wall limit),
waits until the job is ``running`` and then SETTLE_SECONDS more (so that TeX is looping in its sandbox),
then times, on the client's clock, from sending the cancel request until the job is seen ``cancelled``
(``GET /v1/processing/jobs/{id}?wait=30``, answered when the job ends). In between: Core marks the request
and NOTIFYs the claim's session, the agent's cancellation long-poll wakes, the executor stops the sandbox,
the agent reports the cancellation and Core ends the job. One warm-up sample, then BENCH_REPS repetitions of
``n`` (default 20) samples.

  cancel_latency_ms_p50   the median of the repetitions' p50
  cancel_latency_ms_p99   the median of the repetitions' p99 (of 20 samples: the slowest)
Targets: p50 ≤ 2 s, p99 ≤ 5 s.
"""

import json
import time

from scripts.bench.builds import job_get, submit, target_line, until_ended
from scripts.bench.harness import BENCH_REPS, ROOT, percentile, report

ENDLESS = ROOT / "tests" / "corpora" / "tex" / "endless-loop.tex"
SETTLE_SECONDS = 0.3
TARGETS_MS = {"cancel_latency_ms_p50": 2000, "cancel_latency_ms_p99": 5000}


def _running(client, job: dict, timeout: float = 60.0) -> dict:
    """Poll (every 20 ms: nothing else is being timed now) until the build is running on the agent."""
    deadline = time.monotonic() + timeout
    while job["state"] != "running":
        if job["state"] in ("succeeded", "failed", "cancelled", "expired") or time.monotonic() > deadline:
            raise RuntimeError(f"build {job['id']} is {job['state']}, never seen running")
        time.sleep(0.02)
        job = job_get(client, job["id"])
    return job


def cancel_ms(client, project_id) -> float:
    job = _running(client, submit(client, project_id))
    time.sleep(SETTLE_SECONDS)
    started = time.perf_counter()
    cancelled = json.loads(client._call("POST", f"/v1/processing/jobs/{job['id']}/cancel", body=b""))
    job = until_ended(client, cancelled, timeout=60)
    elapsed = (time.perf_counter() - started) * 1000
    if job["state"] != "cancelled":
        raise RuntimeError(f"build {job['id']} ended {job['state']} instead of cancelled: {job['failure']}")
    return elapsed


def cancel_latency(client, user, n: int) -> list[dict]:
    """Measure and report; the two lines, for their targets."""
    from workspace import services as workspace

    project = workspace.project_create(actor_id=user.pk, name="bench-cancel", project_type="latex")
    workspace.file_write(actor_id=user.pk, project_id=project.pk, path="main.tex", data=ENDLESS.read_bytes())
    cancel_ms(client, project.pk)  # warm-up
    p50s, p99s = [], []
    for _ in range(BENCH_REPS):
        samples = [cancel_ms(client, project.pk) for _ in range(n)]
        p50s.append(percentile(samples, 0.5))
        p99s.append(percentile(samples, 0.99))
    config = f"{n} running LaTeX builds (endless loop), cancel request to job seen cancelled"
    return [
        report("cancel_latency_ms_p50", p50s, unit="ms", n=n, config=config),
        report("cancel_latency_ms_p99", p99s, unit="ms", n=n, config=config),
    ]


def cancel_targets(lines: list[dict]) -> None:
    for line in lines:
        target_line(line, TARGETS_MS[line["figure"]])
