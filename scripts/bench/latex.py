"""`make bench-latex`: the full path of a LaTeX build against the processor alone, and a reuse hit.

For the demo document and a 20-page document with a table of contents:
  latex_raw_ms_p50_<doc>       the processor in bubblewrap (copy, latexmk, log, PDF), no Core
  latex_full_ms_p50_<doc>      API submit → capture → queue → agent → upload → finalize → artifact downloaded
  latex_overhead_ms_p50_<doc>  full - raw, per repetition
  reuse_hit_ms_p50             an unchanged resubmission answered as a succeeded job (cache hit)
Each full build edits a comment first, so it is never a reuse hit. BENCH_N builds (default 20) per repetition;
the client polls the job every BENCH_POLL_SECONDS (default 0.025).
"""

import json
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, n_or, report

LATEX = "latex.compile.pdf/v1"
# How often the client asks for the job's state. Each poll is a request served on the two cores that
# also run TeX: a 5 ms poll keeps a core busy answering it and slows the very build being timed, so
# the default is 25 ms (which itself adds up to 25 ms before the client sees the finished job).
POLL_SECONDS = float(os.environ.get("BENCH_POLL_SECONDS", "0.025"))


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


def _until_downloaded(client, job: dict, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while job["state"] not in ("succeeded", "failed", "cancelled", "expired"):
        if time.monotonic() > deadline:  # e.g. the agent found no TeX Live and exited (see agent-0.log)
            raise RuntimeError(f"build {job['id']} still {job['state']} after {timeout:.0f} s")
        time.sleep(POLL_SECONDS)
        job = json.loads(client._call("GET", f"/v1/processing/jobs/{job['id']}")[1])
    if job["state"] != "succeeded":
        raise RuntimeError(f"build failed: {job['failure']}")
    pdf = next(a for a in job["artifacts"] if a["role"] == "pdf")
    client._call("GET", pdf["url"])


def _full_ms(client, user, source: str, n: int) -> tuple[list[float], str]:
    from workspace import services as workspace

    project = workspace.project_create(actor_id=user.pk, name="bench", project_type="latex")
    medians = []
    for rep in range(BENCH_REPS + 1):  # the first repetition warms up and is dropped
        samples = []
        for index in range(n):
            edited = source.replace(r"\begin{document}", f"% build {rep}-{index}\n\\begin{{document}}", 1)
            workspace.file_write(actor_id=user.pk, project_id=project.pk, path="main.tex", data=edited.encode())
            started = time.perf_counter()
            _until_downloaded(client, _submit(client, project.pk, uuid.uuid4().hex))
            samples.append((time.perf_counter() - started) * 1000)
        if rep:
            medians.append(statistics.median(samples))
    return medians, str(project.pk)


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
                full, project_id = _full_ms(client, user, source, n)
                report(f"latex_raw_ms_p50_{name}", raw, unit="ms", n=n, config="processor in bubblewrap, no Core")
                report(f"latex_full_ms_p50_{name}", full, unit="ms", n=n, config="API submit to PDF downloaded")
                report(f"latex_overhead_ms_p50_{name}", [f - r for f, r in zip(full, raw, strict=False)], unit="ms",
                       n=n, config="full - raw, per repetition")  # fmt: skip
            report("reuse_hit_ms_p50", _reuse_ms(client, project_id, n), unit="ms", n=n,
                   config="unchanged resubmission answered as a succeeded job")  # fmt: skip


if __name__ == "__main__":
    main()
