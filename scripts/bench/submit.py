"""`make bench-submit`: submission throughput over HTTP, and capture of a large project.

submit_per_s_http_20_files        build submissions through the API (4 clients, no workers: jobs stay queued)
submit_ms_p50_http_20_files       one submission's latency under that load
capture_ms_p50_1000_files_50mb    freeze under the fence, read, build and hash the bundle
fence_hold_ms_p50 / _p99          how long the project fence is held by the freeze transaction
sha256sum_ms_p50_1000_files_50mb  `sha256sum` over the same bytes on disk, in the same run
capture_vs_sha256sum_ratio        capture p50 / sha256sum p50 (target: within 3x)
"""

import os
import secrets
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, n_or, percentile, report

ROOMY = {"queued_jobs_global": 1_000_000, "active_jobs_per_requester": 1_000_000, "active_jobs_per_project": 1_000_000}


def _user():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(username=f"bench-{uuid.uuid4().hex[:8]}", password="x" * 12)


def _project_with(user, files: dict[str, bytes]):
    from workspace import services as workspace

    project = workspace.project_create(actor_id=user.pk, name="bench", project_type="latex")
    for path, data in files.items():
        workspace.file_write(actor_id=user.pk, project_id=project.pk, path=path, data=data)
    return project


def twenty_files() -> dict[str, bytes]:
    files = {"main.tex": b"\\documentclass{article}\\begin{document}" + b"\\input{ch/c0}" * 15 + b"\\end{document}"}
    files |= {f"ch/c{index}.tex": f"Chapter {index}. ".encode() * 200 for index in range(15)}
    files |= {f"fig/f{index}.png": secrets.token_bytes(20_000) for index in range(4)}
    return files


def large_files() -> dict[str, bytes]:
    """1,000 files, 50 MB: 950 short text documents and 50 assets of 1 MB (random, so incompressible)."""
    files = {f"text/t{index:04d}.tex": f"Section {index}. ".encode() * 70 for index in range(950)}
    files |= {f"assets/a{index:02d}.bin": secrets.token_bytes(1_000_000) for index in range(50)}
    return files


def _submit_until_done(url: str, token: str, project_id, keys, lock: threading.Lock, latencies: list[float]) -> None:
    from quire_worker.client import HttpCoreClient

    client = HttpCoreClient(url, token)
    headers = {"Content-Type": "application/json"}
    while True:
        with lock:
            index = next(keys, None)
        if index is None:
            return
        started = time.perf_counter()
        client._call(
            "POST",
            f"/v1/projects/{project_id}/builds",
            body=b"{}",
            headers={**headers, "Idempotency-Key": uuid.uuid4().hex},
        )
        with lock:
            latencies.append((time.perf_counter() - started) * 1000)


def submissions(url: str, n: int) -> None:
    from access.services import token_create

    user = _user()
    project = _project_with(user, twenty_files())
    _, token = token_create(user_id=user.pk, name="bench")
    rates, latencies_p50 = [], []
    for _ in range(BENCH_REPS):
        latencies: list[float] = []
        arguments = (url, token, project.pk, iter(range(n)), threading.Lock(), latencies)
        started = time.perf_counter()
        threads = [threading.Thread(target=_submit_until_done, args=arguments) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        rates.append(n / (time.perf_counter() - started))
        latencies_p50.append(statistics.median(latencies))
    report("submit_per_s_http_20_files", rates, unit="jobs/s", n=n, config="4 HTTP clients, 20-file project")
    report("submit_ms_p50_http_20_files", latencies_p50, unit="ms", n=n, config="per submission, 4 clients")


def capture(n: int) -> None:
    from processing.submission.capture import project_capture

    files = large_files()
    project = _project_with(_user(), files)
    with tempfile.TemporaryDirectory() as scratch:
        for path, data in files.items():
            (Path(scratch) / path).parent.mkdir(parents=True, exist_ok=True)
            (Path(scratch) / path).write_bytes(data)
        paths = [str(Path(scratch) / path) for path in files]
        per_rep = {"capture": [], "fence50": [], "fence99": [], "sha": []}
        project_capture(project_id=project.pk)  # warm the page cache and the database
        for _ in range(BENCH_REPS):
            captures, fences, shas = [], [], []
            for _ in range(n):
                started = time.perf_counter()
                captured = project_capture(project_id=project.pk)
                captures.append((time.perf_counter() - started) * 1000)
                fences.append(captured.fence_seconds * 1000)
                started = time.perf_counter()
                subprocess.run(["sha256sum", "--", *paths], check=True, stdout=subprocess.DEVNULL)
                shas.append((time.perf_counter() - started) * 1000)
            per_rep["capture"].append(statistics.median(captures))
            per_rep["fence50"].append(percentile(fences, 0.5))
            per_rep["fence99"].append(percentile(fences, 0.99))
            per_rep["sha"].append(statistics.median(shas))
    config = "1,000 files, 50 MB"
    report("capture_ms_p50_1000_files_50mb", per_rep["capture"], unit="ms", n=n, config=config)
    report("fence_hold_ms_p50", per_rep["fence50"], unit="ms", n=n, config=config)
    report("fence_hold_ms_p99", per_rep["fence99"], unit="ms", n=n, config=config)
    report("sha256sum_ms_p50_1000_files_50mb", per_rep["sha"], unit="ms", n=n, config=config)
    ratios = [c / s for c, s in zip(per_rep["capture"], per_rep["sha"], strict=True)]
    report("capture_vs_sha256sum_ratio", ratios, unit="x", n=n, config="capture p50 / sha256sum p50, target <= 3")


def main() -> None:
    from scripts.bench.processes import deployment_write, web_server

    with bench_database() as _, tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        deployment = str(deployment_write(directory, operations=["latex.compile.pdf/v1"], limits=ROOMY))
        os.environ["QUIRE_DEPLOYMENT_FILE"] = deployment
        os.environ["QUIRE_STORAGE_DIR"] = str(directory / "storage")
        django_setup()
        print("Submission and capture benchmark")
        env = {
            "QUIRE_DEPLOYMENT_FILE": deployment,
            "QUIRE_STORAGE_DIR": str(directory / "storage"),
            "DATABASE_POOL": "true",
            "DEBUG": "false",
            "QUIRE_LOG_LEVEL": "WARNING",
            "OFFICE_WARM_ON_START": "false",
        }
        with web_server(env, workers=2, log=directory / "web.log") as url:
            submissions(url, n_or(200))
        capture(n_or(20))


if __name__ == "__main__":
    main()
