"""Real Quire processes for benchmarks: the web server and worker agents."""

import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from scripts.bench.harness import ROOT

WORKER_IDENTITY = "bench"  # the bench deployment's one worker identity
WORKER_TOKEN = "bench-worker-token"  # noqa: S105  a throwaway token for a throwaway database
# INFO makes the agents log each delivery with where its time went (input, processor, upload, delivery).
AGENT_LOG_LEVEL = os.environ.get("BENCH_AGENT_LOG_LEVEL", "WARNING")
# An agent stops only once its acquire long-poll returns (20 s by default), so each agents() exit costs up to
# that; a smoke run at the smallest sizes (tests/scripts/test_benchmarks_run.py) shortens it. Unset: the default.
ACQUIRE_WAIT = os.environ.get("BENCH_ACQUIRE_WAIT")
# The server is measured as it runs in production: without DEBUG (which records every query). No benchmark
# run by a web server here converts Office files, and the converters each server process would start (about
# 5 s of a core per process) would overlap the first measurement.
PRODUCTION_LIKE = {"DEBUG": "false", "OFFICE_WARM_ON_START": "false"}


def deployment_write(directory: Path, *, operations: list[str], limits: dict[str, int]) -> Path:
    path = directory / "deployment.toml"
    lines = [
        "[limits]",
        *(f"{key} = {value}" for key, value in limits.items()),
        "",
        "[[workers]]",
        f'name = "{WORKER_IDENTITY}"',
        f'token_sha256 = "{hashlib.sha256(WORKER_TOKEN.encode()).hexdigest()}"',
        "operations = [" + ", ".join(f'"{op}"' for op in operations) + "]",
    ]
    path.write_text("\n".join(lines) + "\n")
    (directory / "worker.token").write_text(WORKER_TOKEN)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def web_server(env: dict[str, str], *, workers: int = 2, log: Path):
    port = free_port()
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "config.asgi:application",
                "--worker-class",
                "config.http.server.QuireWorker",
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{port}",
                "--graceful-timeout",
                "2",
            ],
            cwd=ROOT,
            env={**os.environ, **PRODUCTION_LIKE, **env},
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(f"{url}/v1/schema", timeout=2).read()  # noqa: S310  loopback
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(log.read_text()[-2000:]) from None
                time.sleep(0.1)
        try:
            yield url
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)


@contextmanager
def agents(url: str, directory: Path, *, count: int, slots: int, operations: str = "test.echo/v1"):
    processes = []
    for index in range(count):
        log = open(directory / f"agent-{index}.log", "ab")  # noqa: SIM115  closed below
        processes.append(
            (
                log,
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "quire_worker",
                        "--core-url",
                        url,
                        "--token-file",
                        str(directory / "worker.token"),
                        "--instance",
                        f"bench-{index}",
                        "--slots",
                        str(slots),
                        "--test-operations",
                        "--operations",
                        operations,
                        "--work-dir",
                        str(directory / f"work-{index}"),
                        *(("--acquire-wait", ACQUIRE_WAIT) if ACQUIRE_WAIT else ()),
                    ],
                    cwd=ROOT,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env={**os.environ, "QUIRE_LOG_LEVEL": AGENT_LOG_LEVEL},
                ),
            )
        )
    try:
        yield [process for _, process in processes]
    finally:
        for _, process in processes:
            process.send_signal(signal.SIGTERM)
        for log, process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()
