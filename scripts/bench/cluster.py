"""`make bench-cluster`: Quire through HAProxy and PgBouncer on the namespace cluster against one server
process beside it, in the same run, on the same PostgreSQL (the cluster's). Root only.

Single process: one gunicorn (2 workers) on loopback, straight to PostgreSQL, two agents of 4 slots.
Cluster: two Core hosts (1 worker each) through PgBouncer in transaction mode, HAProxy over TLS, two agent
hosts of 4 slots (scripts/cluster/topology.py). Figures (each also ``…_single``):
  drain_jobs_per_s_cluster             BENCH_N echo jobs (default 2000) queued at once, drained by both agents
  pickup_ms_p50_cluster / _p99         queued commit → claim received by an idle client through the proxy
                                       (BENCH_PICKUPS samples, default 100)
  drain_cpu_ms_per_job_cluster         the whole machine's CPU per job in that drain (every host shares its 2 cores)
  drain_cluster_vs_single_ratio        target ≥ 0.8
  pickup_p50_cluster_vs_single_ratio   target ≤ 2
  recovery_s_core_replica_killed       a backlog draining (BENCH_BACKLOG jobs, default 40 s of the drain), one
                                       Core host's web server SIGKILLed once a quarter is done and started
                                       again: seconds from the kill until a 1-second window's throughput is
                                       back within 20 % of the rate before it
  latex_overhead_ms_p50_demo_cluster / _single   submit → PDF downloaded, minus the raw build of its bundle
"""

import os
import shutil
import statistics
import tempfile
import threading
import time
from pathlib import Path

from foundation.env import VAR_DIR
from scripts.bench.harness import BENCH_REPS, n_or, percentile, report

ECHO = "test.echo/v1"
PICKUPS = int(os.environ.get("BENCH_PICKUPS", "100"))
AGENT_SLOTS = 4


def _drain_rates(source, n: int) -> tuple[list[float], list[float]]:
    """Per repetition: jobs/s, and the whole machine's CPU milliseconds per job (every process and the kernel:
    on this one machine the proxy's TLS and the pooler take their share of the same two cores)."""
    from scripts.bench.queue import _wait_until_drained, machine_cpu_seconds, queued_insert

    rates, cpu = [], []
    for _ in range(BENCH_REPS):
        started, busy = time.perf_counter(), machine_cpu_seconds()
        queued_insert(n, source)
        _wait_until_drained()
        rates.append(n / (time.perf_counter() - started))
        cpu.append((machine_cpu_seconds() - busy) / n * 1000)
    return rates, cpu


def _pickups(url: str, token: str, source, *, ca_file: str | None) -> list[float]:
    """Pickup latencies (ms) of an idle client acquiring through ``url``, one job at a time."""
    import queue

    from quire_worker.client import HttpCoreClient
    from scripts.bench.queue import queued_insert

    client = HttpCoreClient(url, token, retry_deadline=5.0, ca_file=ca_file)
    session = client.register(
        instance=f"pickup-{time.time_ns()}",
        processors=[{"operation": ECHO, "processor_contract": "quire-echo/1", "slots": 1}],
    )
    received, finished = queue.Queue(), threading.Event()

    def idle_client():
        while not finished.is_set():
            claims = client.acquire(session_id=session["session_id"], offers={ECHO: 1}, wait_seconds=5)
            for claim in claims:
                received.put(time.perf_counter())
                client.fail(
                    claim_id=claim["claim_id"],
                    failure_class="processor_rejected",
                    code="bench",
                    message="pickup only",
                    diagnostics={},
                )

    thread = threading.Thread(target=idle_client, daemon=True)
    thread.start()
    time.sleep(1.0)
    latencies = []
    for _ in range(PICKUPS):
        time.sleep(0.05)
        queued_insert(1, source)
        committed = time.perf_counter()
        latencies.append((received.get(timeout=30) - committed) * 1000)
    finished.set()
    thread.join(timeout=10)
    client.drain(session_id=session["session_id"])
    return latencies


def _recovery_seconds(cluster, source, rate: float) -> float:
    """Seconds from SIGKILLing one Core host's web server (started again at once) until the drain's throughput,
    over a sliding second, is back within 20 % of the rate before the kill (from the jobs' commit times)."""
    from processing.models import TerminalCommit
    from scripts.bench.queue import _wait_until_drained, queued_insert
    from scripts.cluster.topology import CORES

    backlog = int(os.environ.get("BENCH_BACKLOG", "0")) or max(2000, int(rate * 40))
    start = time.time()
    queued_insert(backlog, source)
    since = TerminalCommit.objects.filter(committed_at__gte=_aware(start))
    while since.count() < backlog // 4:  # a steady drain to compare with
        time.sleep(0.2)
    killed_at = time.time()
    cluster.members[f"{CORES[0].name}-web"].kill()
    cluster.core_restart(CORES[0])
    _wait_until_drained()
    ends = sorted(moment.timestamp() for moment in since.values_list("committed_at", flat=True))
    window = min(3.0, killed_at - ends[0])
    before = sum(1 for end in ends if killed_at - window <= end < killed_at) / window
    moment = killed_at
    while moment + 1 <= ends[-1]:
        if sum(1 for end in ends if moment <= end < moment + 1) >= 0.8 * before:
            return moment + 1 - killed_at
        moment += 0.1
    raise RuntimeError("the drain ended before its throughput came back to 80 % of the rate before the kill")


def _aware(timestamp: float):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(timestamp, tz=UTC)


def _latex_overhead(url: str, name: str, n: int, *, ca_file: str | None) -> dict:
    from scripts.bench.builds import LATEX, RawSide, author, paired_builds, report_paired
    from scripts.bench.latex import latex_edit
    from scripts.bench_latex_raw import STARTER_DOCUMENT

    user, client = author(url, ca_file=ca_file)
    raw_side = RawSide(Path(tempfile.mkdtemp(prefix="quire-bench-raw-")), [LATEX])
    paired = paired_builds(client, user, raw_side, project_type="latex", source=STARTER_DOCUMENT, edit=latex_edit, n=n)
    return report_paired("latex", f"demo_{name}", f"LaTeX demo, {name}", paired, n)


def main() -> None:
    from scripts.cluster import network

    if problem := network.need_root():
        raise SystemExit(f"bench-cluster needs the namespace cluster: {problem}")
    from scripts.bench.processes import agents, web_server
    from scripts.cluster.topology import Cluster

    n, builds = n_or(2000), int(os.environ.get("BENCH_BUILDS", "10"))
    cluster = Cluster(VAR_DIR / "cluster-bench", agent_slots=AGENT_SLOTS, agents=False)
    try:
        cluster.start()
        os.environ.update(cluster.core_env(direct=True), QUIRE_LOG_LEVEL="WARNING")
        from scripts.bench.harness import django_setup
        from scripts.bench.queue import _fixture_job_source

        django_setup()
        source = _fixture_job_source()
        token = (cluster.root / "worker.token").read_text().strip()
        print(f"Cluster benchmark: {n} echo jobs x {BENCH_REPS}, {PICKUPS} pickups, {builds} LaTeX builds a side")
        with tempfile.TemporaryDirectory() as temporary:
            directory = Path(temporary)
            shutil.copy(cluster.root / "worker.token", directory / "worker.token")
            # The same environment as a cluster replica's, served on loopback without the proxy's TLS.
            env = {"DATABASE_POOL": "true", "QUIRE_HTTPS": "false", "ALLOWED_HOSTS": "127.0.0.1,localhost"}
            with web_server(env, workers=2, log=directory / "web.log") as url:
                single_pickups = _pickups(url, token, source, ca_file=None)
                with agents(url, directory, count=2, slots=AGENT_SLOTS, operations="test.echo/v1,latex.compile.pdf/v1"):
                    time.sleep(1.5)
                    single, single_cpu = _drain_rates(source, n)
                    single_latex = _latex_overhead(url, "single", builds, ca_file=None)
        ca = str(cluster.ca_file)
        cluster_pickups = _pickups(cluster.url.rstrip("/"), token, source, ca_file=ca)
        cluster.agents_start()
        time.sleep(1.5)
        clustered, cluster_cpu = _drain_rates(source, n)
        cluster_latex = _latex_overhead(cluster.url.rstrip("/"), "cluster", builds, ca_file=ca)
        recovery = _recovery_seconds(cluster, source, statistics.median(clustered))
    finally:
        cluster.stop()
    single_config = "1 server (2 workers) straight to PostgreSQL, 2 agents x 4 slots, http on loopback"
    cluster_config = "2 Core hosts x 1 worker, PgBouncer (transaction), HAProxy TLS, 2 agent hosts x 4 slots"
    report("drain_jobs_per_s_single", single, unit="jobs/s", n=n, config=single_config)
    report("drain_jobs_per_s_cluster", clustered, unit="jobs/s", n=n, config=cluster_config)
    report("drain_cpu_ms_per_job_single", single_cpu, unit="ms", n=n, config=f"{single_config}, whole machine")
    report("drain_cpu_ms_per_job_cluster", cluster_cpu, unit="ms", n=n, config=f"{cluster_config}, whole machine")
    ratios = [c / s for c, s in zip(clustered, single, strict=True)]
    drain_ratio = report("drain_cluster_vs_single_ratio", ratios, unit="x", n=n, config="repetition by repetition")
    for label, latencies in (("single", single_pickups), ("cluster", cluster_pickups)):
        for fraction in (0.5, 0.99):
            report(
                f"pickup_ms_p{round(fraction * 100)}_{label}",
                [percentile(latencies, fraction)],
                unit="ms",
                n=len(latencies),
                config=single_config if label == "single" else cluster_config,
            )
    pickup_ratio = report(
        "pickup_p50_cluster_vs_single_ratio",
        [percentile(cluster_pickups, 0.5) / percentile(single_pickups, 0.5)],
        unit="x",
        n=PICKUPS,
        config="idle client, 50 ms spacing",
    )
    recovered = report("recovery_s_core_replica_killed", [recovery], unit="s", n=1, config=cluster_config)
    print(f"  latex overhead p50: single {single_latex['value']:.0f} ms, cluster {cluster_latex['value']:.0f} ms")
    _target("drain through the cluster >= 0.8x single", drain_ratio["value"] >= 0.8, drain_ratio)
    _target("pickup p50 through the cluster <= 2x single", pickup_ratio["value"] <= 2, pickup_ratio)
    _target(
        "recovery <= 5 s plus the dead replica's request hold (5 s + a 20 s long poll)",
        recovered["value"] <= 30,
        recovered,
    )


def _target(what: str, met: bool, line: dict) -> None:
    print(f"  target {what}: {'met' if met else 'MISSED'} ({line['value']:.2f} {line['unit']})")


if __name__ == "__main__":
    main()
