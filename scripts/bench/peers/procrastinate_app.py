"""The procrastinate peer of `make bench-queue`, run by the peer's own virtual environment only (never Quire's).

Imported by procrastinate's worker processes as ``procrastinate_app.app`` (``procrastinate --app=… worker``),
and run as a script by ``scripts.bench.procrastinate_peer`` to measure, on the database ``PEER_CONNINFO``
names (procrastinate's own, on the server Quire's benchmark uses):

- the drain: N no-op jobs deferred in one batch to 2 idle worker processes (each ``--concurrency`` C, woken
  by procrastinate's LISTEN/NOTIFY), from just before the batch until no job is left to do, as Quire's
  drains are timed;
- the pickup: one job deferred every 50 ms to one idle worker of concurrency 1; from the deferring
  transaction's commit to the task starting in the worker, as Quire's pickup is timed from a job's commit to
  the claim reaching an idle agent. The task sends its ``time.perf_counter()`` (CLOCK_MONOTONIC, one clock
  for every process of the machine) over UDP.

It prints one JSON line per figure (``{"figure", "per_rep", "unit", "n", "config"}``); the caller reports them.
Standard library, procrastinate and psycopg only.
"""

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import procrastinate
import psycopg

DRAIN_QUEUE, PICKUP_QUEUE = "bench_drain", "bench_pickup"
app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=os.environ.get("PEER_CONNINFO", "")))


@app.task(name="bench.noop", queue=DRAIN_QUEUE)
async def noop() -> None:
    return None


@app.task(name="bench.pickup", queue=PICKUP_QUEUE)
async def pickup() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.sendto(repr(time.perf_counter()).encode(), ("127.0.0.1", int(os.environ["PEER_PICKUP_PORT"])))


def _procrastinate(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "procrastinate", "--app=procrastinate_app.app", *arguments]


def _environment(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent), **extra}


def schema_apply() -> None:
    """procrastinate's schema, unless an earlier call of this script on the same database applied it."""
    with psycopg.connect(os.environ["PEER_CONNINFO"]) as connection:
        if connection.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL").fetchone()[0]:
            return
    subprocess.run(_procrastinate("schema", "--apply"), env=_environment(), check=True, capture_output=True)


@contextlib.asynccontextmanager
async def workers(count: int, *, concurrency: int, queue: str, env: dict[str, str] | None = None):
    """``count`` worker processes on ``queue``, registered and listening when this yields; stopped after."""
    processes = [
        subprocess.Popen(
            _procrastinate("worker", f"--queues={queue}", f"--concurrency={concurrency}"),
            env=_environment(**(env or {})),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]
    try:
        deadline = time.monotonic() + 60
        while await _registered_workers() < count:
            if time.monotonic() > deadline or any(process.poll() is not None for process in processes):
                raise RuntimeError("procrastinate's workers did not start")
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # registered comes just before listening, as Quire's agents get 1.5 s
        yield
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()


async def _query_one(sql: str):
    async with await psycopg.AsyncConnection.connect(os.environ["PEER_CONNINFO"], autocommit=True) as connection:
        return (await (await connection.execute(sql)).fetchone())[0]


async def _registered_workers() -> int:
    return await _query_one("SELECT count(*) FROM procrastinate_workers")


async def drain(*, jobs: int, reps: int, concurrency: int) -> list[float]:
    rates = []
    async with await psycopg.AsyncConnection.connect(os.environ["PEER_CONNINFO"], autocommit=True) as watcher:
        for _ in range(reps):
            async with workers(2, concurrency=concurrency, queue=DRAIN_QUEUE):
                started = time.perf_counter()
                await noop.batch_defer_async(*({} for _ in range(jobs)))
                while await _left(watcher):
                    await asyncio.sleep(0.05)
                rates.append(jobs / (time.perf_counter() - started))
            if (done := await _query_one("SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'")) < jobs:
                raise RuntimeError(f"only {done} procrastinate jobs succeeded")
    return rates


async def _left(watcher) -> bool:
    """Whether a job is still to do or doing: an EXISTS on procrastinate's own partial index, as Quire's drain
    asks of its own."""
    cursor = await watcher.execute("SELECT EXISTS (SELECT 1 FROM procrastinate_jobs WHERE status IN ('todo', 'doing'))")
    return (await cursor.fetchone())[0]


async def pickups(*, samples: int, reps: int) -> dict[float, list[float]]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver:
        receiver.bind(("127.0.0.1", 0))
        receiver.settimeout(30)
        port = str(receiver.getsockname()[1])
        per_rep: dict[float, list[float]] = {0.5: [], 0.95: [], 0.99: []}
        async with workers(1, concurrency=1, queue=PICKUP_QUEUE, env={"PEER_PICKUP_PORT": port}):
            for _ in range(reps):
                latencies = []
                for _ in range(samples):
                    await asyncio.sleep(0.05)
                    await pickup.defer_async()  # its own transaction: committed when this returns
                    committed = time.perf_counter()
                    started = float(receiver.recv(64))
                    latencies.append((started - committed) * 1000)
                for fraction in per_rep:
                    per_rep[fraction].append(_percentile(latencies, fraction))
    return per_rep


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def _emit(figure: str, per_rep: list[float], *, unit: str, n: int, config: str) -> None:
    print(json.dumps({"figure": figure, "per_rep": per_rep, "unit": unit, "n": n, "config": config}), flush=True)


async def main(arguments: argparse.Namespace) -> None:
    schema_apply()
    async with app.open_async():
        for concurrency in arguments.concurrency:
            rates = await drain(jobs=arguments.jobs, reps=arguments.reps, concurrency=concurrency)
            _emit(f"procrastinate_drain_jobs_per_s_2_processes_concurrency_{concurrency}", rates, unit="jobs/s",
                  n=arguments.jobs, config=f"procrastinate {procrastinate.__version__}, 2 worker processes x "
                  f"concurrency {concurrency}, LISTEN/NOTIFY, no-op async task")  # fmt: skip
        if not arguments.pickups:
            return
        for fraction, values in (await pickups(samples=arguments.pickups, reps=arguments.reps)).items():
            _emit(f"procrastinate_pickup_ms_p{round(fraction * 100)}", values, unit="ms", n=arguments.pickups,
                  config=f"procrastinate {procrastinate.__version__}, 1 idle worker x concurrency 1, "
                  "LISTEN/NOTIFY, 50 ms spacing")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--reps", type=int, required=True)
    parser.add_argument("--pickups", type=int, required=True)
    parser.add_argument("--concurrency", type=lambda text: [int(c) for c in text.split(",") if c], default=[1, 4])
    asyncio.run(main(parser.parse_args()))
