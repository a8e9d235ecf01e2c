"""`make bench-latex`: the full path of a LaTeX build against the processor alone, and a reuse hit.

For the demo document and a 20-page document with a table of contents:
  latex_raw_ms_p50_<doc>       the processor in bubblewrap (copy, latexmk, log, PDF), no Core
  latex_full_ms_p50_<doc>      API submit → capture → queue → agent → upload → finalize → artifact downloaded
  latex_overhead_ms_p50_<doc>  full - raw, per repetition
  reuse_hit_ms_p50             an unchanged resubmission answered as a succeeded job (cache hit)
  latex_phase_ms_p50_<phase>_<doc>   where the full path's time goes, from the job's, attempt's and staged
                               outputs' timestamps and the client's clock (same machine): submit_to_queued,
                               queued_to_claimed, claimed_to_first_output (TeX runs here), between_outputs,
                               last_output_to_delivered, delivered_to_succeeded, succeeded_to_seen, pdf_download
Each full build edits a comment first, so it is never a reuse hit. BENCH_N builds (default 20) per repetition.
The client waits for each job's end with ``GET /v1/processing/jobs/{id}?wait=20`` (answered when the job ends,
woken by NOTIFY); ``BENCH_POLL_SECONDS`` set instead polls at that interval, as a client without waits would.
"""

import itertools
import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, n_or, report

LATEX = "latex.compile.pdf/v1"
# Polling instead of waiting: each poll is a request served on the two cores that also run TeX, so a
# polling client slows the very build being timed, and sees the end up to one interval late.
POLL_SECONDS = float(os.environ.get("BENCH_POLL_SECONDS", "0"))
CLIENT = f"polling every {POLL_SECONDS * 1000:g} ms" if POLL_SECONDS else "waiting (?wait=20)"


def _raw_ms(source: str, n: int) -> list[float]:
    from processing.worker.sandbox import BwrapExecutor
    from scripts.bench_latex_raw import measure_builds

    medians = measure_builds({"main.tex": source}, compiler="pdflatex", executors={"bwrap": BwrapExecutor()}, n=n,
                             reps=BENCH_REPS)  # fmt: skip
    return medians["bwrap"]


def _author(url: str):
    from django.contrib.auth import get_user_model

    from access.services import token_create
    from processing.worker.client import HttpCoreClient

    user = get_user_model().objects.create_user(username=f"bench-{uuid.uuid4().hex[:8]}", password="x" * 12)
    _, token = token_create(user_id=user.pk, name="bench")
    client = HttpCoreClient(url, token)
    return user, client


def _submit(client, project_id, key) -> dict:
    _, data = client._call("POST", f"/v1/projects/{project_id}/builds", body=b"{}",
                           headers={"Content-Type": "application/json", "Idempotency-Key": key})  # fmt: skip
    return json.loads(data)


def _until_downloaded(client, job: dict, timeout: float = 120.0) -> tuple[str, float]:
    """Poll until the job ends, then download its PDF; the job id and when the client saw it succeed."""
    deadline = time.monotonic() + timeout
    while job["state"] not in ("succeeded", "failed", "cancelled", "expired"):
        if time.monotonic() > deadline:  # e.g. the agent found no TeX Live and exited (see agent-0.log)
            raise RuntimeError(f"build {job['id']} still {job['state']} after {timeout:.0f} s")
        if POLL_SECONDS:
            time.sleep(POLL_SECONDS)
            job = json.loads(client._call("GET", f"/v1/processing/jobs/{job['id']}")[1])
        else:
            job = json.loads(client._call("GET", f"/v1/processing/jobs/{job['id']}?wait=20")[1])
    if job["state"] != "succeeded":
        raise RuntimeError(f"build failed: {job['failure']}")
    seen_at = time.time()
    pdf = next(a for a in job["artifacts"] if a["role"] == "pdf")
    client._call("GET", pdf["url"])
    return job["id"], seen_at


def _full_ms(client, user, source: str, n: int) -> tuple[list[float], str, list[list[tuple]]]:
    """Per measured repetition the median full-path time; the project; per repetition each build's
    (job id, submitted at, seen succeeded at, downloaded at) in wall-clock seconds."""
    from workspace import services as workspace

    project = workspace.project_create(actor_id=user.pk, name="bench", project_type="latex")
    medians, timelines = [], []
    for rep in range(BENCH_REPS + 1):  # the first repetition warms up and is dropped
        samples, builds = [], []
        for index in range(n):
            edited = source.replace(r"\begin{document}", f"% build {rep}-{index}\n\\begin{{document}}", 1)
            workspace.file_write(actor_id=user.pk, project_id=project.pk, path="main.tex", data=edited.encode())
            started, submitted_at = time.perf_counter(), time.time()
            job_id, seen_at = _until_downloaded(client, _submit(client, project.pk, uuid.uuid4().hex))
            samples.append((time.perf_counter() - started) * 1000)
            builds.append((job_id, submitted_at, seen_at, time.time()))
        if rep:
            medians.append(statistics.median(samples))
            timelines.append(builds)
    return medians, str(project.pk), timelines


PHASES = ("submit_to_queued", "queued_to_claimed", "claimed_to_first_output", "between_outputs",
          "last_output_to_delivered", "delivered_to_succeeded", "succeeded_to_seen", "pdf_download")  # fmt: skip


def _phases_ms(builds: list[tuple]) -> dict[str, float]:
    """The median of each phase over these builds, in milliseconds."""
    from processing.models import ProcessingAttempt, ProcessingJob, StagedOutput

    per_phase: dict[str, list[float]] = {phase: [] for phase in PHASES}
    for job_id, submitted_at, seen_at, downloaded_at in builds:
        job = ProcessingJob.objects.get(pk=job_id)
        attempt = ProcessingAttempt.objects.get(job=job, state="delivered")
        staged = sorted(o.created_at.timestamp() for o in StagedOutput.objects.filter(attempt=attempt))
        moments = [submitted_at, job.queued_at.timestamp(), attempt.started_at.timestamp(), staged[0], staged[-1],
                   attempt.ended_at.timestamp(), job.completed_at.timestamp(), seen_at, downloaded_at]  # fmt: skip
        for phase, (start, end) in zip(PHASES, itertools.pairwise(moments), strict=True):
            per_phase[phase].append((end - start) * 1000)
    return {phase: statistics.median(values) for phase, values in per_phase.items()}


def _report_phases(name: str, timelines: list[list[tuple]], n: int) -> None:
    per_rep = [_phases_ms(builds) for builds in timelines]
    for phase in PHASES:
        report(f"latex_phase_ms_p50_{phase}_{name}", [rep[phase] for rep in per_rep], unit="ms", n=n,
               config="phase of the full path, from job/attempt/output timestamps")  # fmt: skip


def _reuse_ms(client, project_id: str, n: int) -> list[float]:
    medians = []
    for _ in range(BENCH_REPS):
        samples = []
        for _ in range(n):
            started = time.perf_counter()
            job = _submit(client, project_id, uuid.uuid4().hex)
            samples.append((time.perf_counter() - started) * 1000)
            if not job["cache_hit"]:
                raise RuntimeError("expected a reuse hit")
        medians.append(statistics.median(samples))
    return medians


def main() -> None:
    from scripts.bench.processes import agents, deployment_write, web_server
    from scripts.bench_latex_raw import STARTER_DOCUMENT, twenty_page_document

    n = n_or(20)
    with bench_database() as _, tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        limits = {"running_jobs_per_requester": 100, "active_jobs_per_requester": 1000}
        deployment = str(deployment_write(directory, operations=[LATEX], limits=limits))
        os.environ["QUIRE_DEPLOYMENT_FILE"] = deployment
        django_setup()
        env = {"QUIRE_DEPLOYMENT_FILE": deployment, "DATABASE_POOL": "true", "DEBUG": "false",
               "QUIRE_LOG_LEVEL": "WARNING", "OFFICE_WARM_ON_START": "false"}  # fmt: skip
        print("LaTeX benchmark (pdflatex, bubblewrap)")
        with web_server(env, workers=2, log=directory / "web.log") as url, \
                agents(url, directory, count=1, slots=1, operations=LATEX):  # fmt: skip
            user, client = _author(url)
            for name, source in (("demo", STARTER_DOCUMENT), ("20_pages", twenty_page_document())):
                raw = _raw_ms(source, n)
                full, project_id, timelines = _full_ms(client, user, source, n)
                report(f"latex_raw_ms_p50_{name}", raw, unit="ms", n=n, config="processor in bubblewrap, no Core")
                report(f"latex_full_ms_p50_{name}", full, unit="ms", n=n,
                       config=f"API submit to PDF downloaded, client {CLIENT}")  # fmt: skip
                report(f"latex_overhead_ms_p50_{name}", [f - r for f, r in zip(full, raw, strict=False)], unit="ms",
                       n=n, config="full - raw, per repetition")  # fmt: skip
                _report_phases(name, timelines, n)
            report("reuse_hit_ms_p50", _reuse_ms(client, project_id, n), unit="ms", n=n,
                   config="unchanged resubmission answered as a succeeded job")  # fmt: skip


if __name__ == "__main__":
    main()
