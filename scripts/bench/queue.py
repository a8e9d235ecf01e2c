"""`make bench-queue`: drain throughput (HTTP and service level), pickup latency, claim latency vs depth.

Uses the test-only ``test.echo/v1`` operation. Figures:
  drain_jobs_per_s_http_1_agent / _2_agents   full protocol, agents of 4 slots (BENCH_N jobs, default 1000)
  drain_cpu_ms_per_job_http_1_agent / _2_agents   the whole machine's CPU time per job in that drain
  drain_jobs_per_s_service_1_process / _2_processes   claim (4 per acquire) → stage → deliver → finalize, no HTTP
  pickup_ms_p50 / p95 / p99                   queued commit → claim received by an idle agent over HTTP
                                              (BENCH_PICKUPS samples, default 200)
  claim_ms_p50_depth_<d>                      service-level claim with d queued rows; plus the 1M/1k ratio

The peer, procrastinate 3 (scripts/bench/procrastinate_peer.py: its own virtual environment and database on
the same server, in the same run), drains the same number of no-op jobs with 2 worker processes (concurrency
1 and 4), once right after each of Quire's 2-process and 2-agent repetitions, and is picked up the same way:
  procrastinate_drain_jobs_per_s_2_processes_concurrency_<c>, procrastinate_pickup_ms_p50 / p95 / p99
  drain_service_ratio_vs_procrastinate        Quire's 2-process service drain / the peer's 2 x 1 drain
  drain_http_ratio_vs_procrastinate           Quire's 2-agent HTTP drain / the peer's 2 x 1 drain
  (…_concurrency_4: the same against the peer's 2 x 4 drain)
  pickup_p50_ratio_vs_procrastinate           Quire's pickup p50 over HTTP / the peer's (below 1: faster)
Each ratio is taken repetition by repetition (Quire's i-th over the peer's drain right after it); its value is
the median.
"""

import multiprocessing
import os
import queue
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, n_or, percentile, report
from scripts.bench.processes import WORKER_IDENTITY

ECHO = "test.echo/v1"
ROOMY = {"running_jobs_per_requester": 1_000_000, "running_jobs_per_project": 1_000_000,
         "active_jobs_per_requester": 1_000_000, "active_jobs_per_project": 1_000_000,
         "queued_jobs_global": 2_000_000, "lease_seconds": 60}  # fmt: skip
SERVICE_SLOTS = 4  # as many as each HTTP agent has


def deployment_use(directory: Path) -> str:
    """Write the bench deployment and point this process (settings) and its children (env) at it."""
    from django.conf import settings

    from scripts.bench.processes import deployment_write

    path = str(deployment_write(directory, operations=[ECHO], limits=ROOMY))
    settings.QUIRE_DEPLOYMENT_FILE = os.environ["QUIRE_DEPLOYMENT_FILE"] = path
    return path


def _fixture_job_source():
    """A requester, a project and one captured echo bundle every queued job can share."""
    from django.contrib.auth import get_user_model

    from processing.kernel.blobs import blob_put
    from processing.submission.capture import project_capture
    from workspace import services as workspace

    user = get_user_model().objects.create_user(username=f"bench-{time.time_ns()}", password="x" * 12)
    project = workspace.project_create(actor_id=user.pk, name="bench", project_type="latex", starter=True)
    bundle = project_capture(project_id=project.pk).bundle
    return user.pk, project.pk, blob_put(bundle.data), bundle.sha256


def queued_insert(count: int, source) -> None:
    """Insert ``count`` queued echo jobs in one statement, then wake idle workers."""
    from django.db import connection, transaction

    requester, project, blob, digest = source
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO processing_processingjob
              (id, operation, requester_id, project_id, state, phase, options, options_digest, input_profile,
               input_filename, input_blob_id, input_digest, processor_contract, cache_hit, attempt_count, max_attempts,
               cancellation_requested, failure_class, failure_code, failure_message, diagnostic_log, diagnostics,
               captured, created_at, queued_at, deadline_at)
            SELECT gen_random_uuid(), %s, %s, %s, 'queued', 'waiting_for_worker', '{}', %s, '', '', %s, %s, '', false,
                   0, 3, false, '', '', '', '', '[]', '{}', clock_timestamp(), clock_timestamp(),
                   now() + interval '1 day'
            FROM generate_series(1, %s)
            """,
            [ECHO, requester, project, "0" * 64, blob, digest, count],
        )
        cursor.execute("SELECT pg_notify('quire_processing_queue', %s)", [ECHO])


def _succeeded() -> int:
    from processing.models import ProcessingJob

    return ProcessingJob.objects.filter(state="succeeded").count()


def _wait_until_drained(timeout: float = 900) -> None:
    """Until no job is left unfinished: an EXISTS on the partial index of active jobs, 20 times a second.
    Counting the succeeded jobs instead read every one of them, more with each repetition, on the machine
    being measured (0.6 ms a count after 5,000 jobs; the 2-agent repetitions follow 45,000)."""
    from processing.models import ProcessingJob
    from processing.models.jobs import ACTIVE_STATES

    deadline = time.monotonic() + timeout
    while ProcessingJob.objects.filter(state__in=ACTIVE_STATES).exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the queued jobs did not all finish")
        time.sleep(0.05)


def machine_cpu_seconds() -> float:
    """CPU time the whole machine has been busy (every core, user and system), from /proc/stat."""
    first_line = Path("/proc/stat").read_text().split("\n", 1)[0]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in first_line.split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def drain_http(directory: Path, source, n: int, beside=None) -> dict[int, list[float]]:
    """Drain rates per repetition, by number of agents; ``beside()`` runs after each 2-agent repetition."""
    from scripts.bench.processes import agents, web_server

    env = {
        "QUIRE_DEPLOYMENT_FILE": deployment_use(directory),
        "QUIRE_TEST_OPERATIONS": "true",
        "DATABASE_POOL": "true",
        "QUIRE_LOG_LEVEL": "WARNING",
    }
    rates_by_agents = {}
    with web_server(env, workers=2, log=directory / "web.log") as url:
        for count in (1, 2):
            rates, cpu = [], []
            for _ in range(BENCH_REPS):
                with agents(url, directory, count=count, slots=4):
                    time.sleep(1.5)  # let the agents register and start long-polling
                    before = _succeeded()
                    started, busy = time.perf_counter(), machine_cpu_seconds()
                    queued_insert(n, source)
                    _wait_until_drained()
                    rates.append(n / (time.perf_counter() - started))
                    cpu.append((machine_cpu_seconds() - busy) / n * 1000)
                    if (finished := _succeeded() - before) != n:
                        raise RuntimeError(f"{finished} of {n} jobs succeeded")
                if count == 2 and beside:
                    beside()
            label = "1_agent" if count == 1 else f"{count}_agents"
            config = f"{count} agent(s) x 4 slots, gunicorn 2 workers, echo"
            report(f"drain_jobs_per_s_http_{label}", rates, unit="jobs/s", n=n, config=config)
            # Where the drain's ceiling comes from: every process's CPU (server, agents, PostgreSQL, kernel).
            report(f"drain_cpu_ms_per_job_http_{label}", cpu, unit="ms", n=n, config=f"{config}, whole machine")
            rates_by_agents[count] = rates
    return rates_by_agents


def _service_worker(database_url: str, deployment: str, barrier, done) -> None:
    # WARNING, as the HTTP drain's server logs: a line per finalized job is the bench's output, not the work measured.
    os.environ.update(
        DATABASE_URL=database_url,
        QUIRE_DEPLOYMENT_FILE=deployment,
        QUIRE_TEST_OPERATIONS="true",
        QUIRE_LOG_LEVEL="WARNING",
    )
    django_setup()
    import hashlib

    from django.utils import timezone

    from processing.finalization.finalize import job_finalize
    from processing.models import WorkerProcessor, WorkerSession
    from processing.queue.claims import claims_acquire
    from processing.queue.delivery import Accepted, Diagnostics, delivery_accept_held
    from processing.queue.staging import output_stage

    now = timezone.now()
    session = WorkerSession.objects.create(
        identity=WORKER_IDENTITY,
        instance=f"svc-{os.getpid()}",
        protocol_version="1",
        registered_at=now,
        last_heartbeat_at=now,
        expires_at=now + timedelta(hours=1),
    )
    WorkerProcessor.objects.create(session=session, operation=ECHO, processor_contract="quire-echo/1", slots=256)
    payload = b"{}"
    digest = hashlib.sha256(payload).hexdigest()
    barrier.wait()
    handled = 0
    # As an agent of SERVICE_SLOTS slots does: one acquire takes a claim for every free slot.
    while claims := claims_acquire(session_id=session.pk, offers={ECHO: SERVICE_SLOTS}, count=SERVICE_SLOTS):
        for claim in claims:
            output_stage(
                claim_id=claim.claim_id,
                role="echo",
                media_type="application/octet-stream",
                filename="e",
                data=payload,
                expected_sha256=digest,
            )
            # As the delivery route does: finalization starts from the rows the delivery statement returned.
            accepted = delivery_accept_held(
                claim_id=claim.claim_id, identity=WORKER_IDENTITY, offers={}, diagnostics=Diagnostics()
            )
            if not isinstance(accepted, Accepted):
                raise RuntimeError(f"claim {claim.claim_id} was delivered twice")
            job_finalize(job_id=accepted.job_id, token=accepted.token, delivered=accepted.delivered)
            handled += 1
    done.put(handled)


def drain_service(directory: Path, source, n: int, beside=None) -> dict[int, list[float]]:
    """Drain rates per repetition, by number of processes; ``beside()`` runs after each 2-process repetition."""
    deployment = deployment_use(directory)
    rates_by_processes = {}
    context = multiprocessing.get_context("spawn")
    for count in (1, 2):
        rates = []
        for _ in range(BENCH_REPS):
            queued_insert(n, source)
            barrier, done = context.Barrier(count + 1), context.Queue()
            workers = [
                context.Process(target=_service_worker, args=(os.environ["DATABASE_URL"], deployment, barrier, done))
                for _ in range(count)
            ]
            for worker in workers:
                worker.start()
            barrier.wait()
            started = time.perf_counter()
            handled = sum(done.get(timeout=900) for _ in workers)
            rates.append(handled / (time.perf_counter() - started))
            for worker in workers:
                worker.join()
            if count == 2 and beside:
                beside()
        label = "1_process" if count == 1 else f"{count}_processes"
        report(
            f"drain_jobs_per_s_service_{label}",
            rates,
            unit="jobs/s",
            n=n,
            config=f"{count} process(es), {SERVICE_SLOTS} claims per acquire, echo",
        )
        rates_by_processes[count] = rates
    return rates_by_processes


def pickup(directory: Path, source, n: int) -> list[float]:
    """Pickup p50 per repetition."""
    from quire_worker.client import CoreUnavailable, HttpCoreClient
    from scripts.bench.processes import WORKER_TOKEN, web_server

    env = {
        "QUIRE_DEPLOYMENT_FILE": deployment_use(directory),
        "QUIRE_TEST_OPERATIONS": "true",
        "DATABASE_POOL": "true",
        "QUIRE_LOG_LEVEL": "WARNING",
    }
    with web_server(env, workers=2, log=directory / "web-pickup.log") as url:
        # A short retry deadline: once the server is gone these threads end instead of retrying for minutes.
        client = HttpCoreClient(url, WORKER_TOKEN, retry_deadline=2.0)
        session = client.register(
            instance="pickup", processors=[{"operation": ECHO, "processor_contract": "quire-echo/1", "slots": 1}]
        )
        received: queue.Queue = queue.Queue()
        finished = threading.Event()

        def until_finished(loop):
            def run():
                try:
                    loop()
                except CoreUnavailable:
                    if not finished.is_set():
                        raise

            return run

        def idle_agent():
            while not finished.is_set():
                claims = client.acquire(session_id=session["session_id"], offers={ECHO: 1}, wait_seconds=20)
                if not claims:
                    continue
                [claim] = claims
                received.put(time.perf_counter())
                client.fail(
                    claim_id=claim["claim_id"],
                    failure_class="processor_rejected",
                    code="bench",
                    message="pickup only",
                    diagnostics={},
                )

        def heartbeats():  # keep the session alive as a real agent does; a lapsed one is told session_gone
            while not finished.wait(5):
                client.session_heartbeat(session_id=session["session_id"], health={ECHO: True})

        threading.Thread(target=until_finished(idle_agent), daemon=True).start()
        threading.Thread(target=until_finished(heartbeats), daemon=True).start()
        time.sleep(1.0)
        per_rep = {0.5: [], 0.95: [], 0.99: []}
        for _ in range(BENCH_REPS):
            latencies = []
            for _ in range(n):
                time.sleep(0.05)
                queued_insert(1, source)
                committed = time.perf_counter()
                latencies.append((received.get(timeout=30) - committed) * 1000)
            for fraction in per_rep:
                per_rep[fraction].append(percentile(latencies, fraction))
        finished.set()
        for fraction, values in per_rep.items():
            report(
                f"pickup_ms_p{round(fraction * 100)}",
                values,
                unit="ms",
                n=n,
                config="1 idle agent over HTTP, LISTEN/NOTIFY, 50 ms spacing",
            )
        return per_rep[0.5]


class PeerBeside:
    """The peer's drains, one of each concurrency right after each of Quire's 2-process and 2-agent
    repetitions: a ratio's two drains are a minute apart at most, not the length of the benchmark (this
    machine's speed drifts by a fifth over minutes)."""

    def __init__(self, peer_runs, n: int) -> None:
        self._peer, self._n = peer_runs, n
        self.drains: dict[str, dict[int, list[float]]] = {"service": {1: [], 4: []}, "http": {1: [], 4: []}}

    def after(self, side: str):
        def run() -> None:
            for concurrency, rates in self.drains[side].items():
                rates.append(self._peer.drain_once(jobs=self._n, concurrency=concurrency))

        return run


def peer(peer_runs, beside: PeerBeside, n: int, pickups: int, quire: dict[str, list[float]]) -> None:
    """procrastinate's drains (taken beside Quire's) and pickups in this run, on this server, and the ratios."""
    for concurrency in (1, 4):
        report(
            f"procrastinate_drain_jobs_per_s_2_processes_concurrency_{concurrency}",
            beside.drains["service"][concurrency] + beside.drains["http"][concurrency],
            unit="jobs/s",
            n=n,
            config=f"procrastinate 3, 2 worker processes x concurrency {concurrency}, LISTEN/NOTIFY, no-op async "
            "task; one drain after each of Quire's 2-process and 2-agent repetitions",
        )
    figures = peer_runs.run(jobs=n, reps=BENCH_REPS, pickups=pickups, concurrency=())
    for name, figure in figures.items():
        report(name, figure["per_rep"], unit=figure["unit"], n=figure["n"], config=figure["config"])
    for concurrency, suffix in ((1, ""), (4, "_concurrency_4")):
        peer_label = f"procrastinate (2 processes x concurrency {concurrency})"
        for side, label in (("service", "2 processes, service level"), ("http", "2 agents x 4 slots over HTTP")):
            _ratio(
                f"drain_{side}_ratio_vs_procrastinate{suffix}",
                quire[f"drain_{side}"],
                beside.drains[side][concurrency],
                n=n,
                config=f"Quire ({label}) / {peer_label}, the peer's drain right after Quire's",
            )
    _ratio(
        "pickup_p50_ratio_vs_procrastinate",
        quire["pickup_p50"],
        figures["procrastinate_pickup_ms_p50"]["per_rep"],
        n=pickups,
        config="Quire's pickup p50 over HTTP / procrastinate's; below 1 is faster",
    )


def _ratio(figure: str, ours: list[float], theirs: list[float], *, n: int, config: str) -> None:
    report(
        figure,
        [mine / peer for mine, peer in zip(ours, theirs, strict=True)],
        unit="x",
        n=n,
        config=f"{config}, repetition by repetition",
    )


def claim_depth(directory: Path, source, depths: list[int], claims: int) -> None:
    from django.db import connection
    from django.utils import timezone

    from processing.models import WorkerProcessor, WorkerSession
    from processing.queue.claims import claim_acquire

    deployment_use(directory)
    now = timezone.now()
    session = WorkerSession.objects.create(
        identity=WORKER_IDENTITY,
        instance="depth",
        protocol_version="1",
        registered_at=now,
        last_heartbeat_at=now,
        expires_at=now + timedelta(hours=6),
    )
    WorkerProcessor.objects.create(session=session, operation=ECHO, processor_contract="quire-echo/1", slots=256)
    results = {}
    for depth in depths:
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE processing_processingjob CASCADE")
        queued_insert(depth, source)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE processing_processingjob")
        per_rep = []
        for _ in range(BENCH_REPS):
            timings = []
            for _ in range(claims):
                started = time.perf_counter()
                claim_acquire(session_id=session.pk, offers={ECHO: 1})
                timings.append((time.perf_counter() - started) * 1000)
            with connection.cursor() as cursor:  # keep the session's live claims under its slots
                cursor.execute("UPDATE processing_processingattempt SET state = 'released' WHERE state = 'running'")
            per_rep.append(percentile(timings, 0.5))
        results[depth] = report(
            f"claim_ms_p50_depth_{depth}", per_rep, unit="ms", n=claims, config=f"{depth} queued rows, service level"
        )
    if len(depths) > 1:
        ratio = results[depths[-1]]["value"] / results[depths[0]]["value"]
        report(
            f"claim_latency_ratio_depth_{depths[-1]}_vs_{depths[0]}",
            [ratio],
            unit="x",
            n=claims,
            config="p50 at the largest depth / p50 at the smallest",
        )


def main() -> None:
    from scripts.bench.procrastinate_peer import peer_session

    with (
        bench_database() as database_url,
        tempfile.TemporaryDirectory() as temporary,
        peer_session(database_url) as peer_runs,
    ):
        os.environ["QUIRE_TEST_OPERATIONS"] = "true"
        django_setup()
        directory = Path(temporary)
        source = _fixture_job_source()
        print("Queue benchmark (test.echo/v1)")
        n, pickups = n_or(1000), int(os.environ.get("BENCH_PICKUPS", "200"))
        beside = PeerBeside(peer_runs, n)
        service = drain_service(directory, source, n, beside=beside.after("service"))
        http = drain_http(directory, source, n, beside=beside.after("http"))
        pickup_p50 = pickup(directory, source, pickups)
        quire = {"drain_service": service[2], "drain_http": http[2], "pickup_p50": pickup_p50}
        peer(peer_runs, beside, n, pickups, quire)
        depths = [int(d) for d in os.environ.get("BENCH_DEPTHS", "1000,100000,1000000").split(",")]
        claim_depth(directory, source, depths, claims=200)


if __name__ == "__main__":
    main()
