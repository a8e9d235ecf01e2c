"""`make bench-library`: the PDF library's acceptance, outbox relay, ingestion and search figures.

Figures (medians over BENCH_REPS, with min–max):
  library_accept_versions_per_s_distinct     8 client processes, each replacing its own document
  library_accept_versions_per_s_contended    8 client processes replacing one document (re-read on 412)
  library_accept_conflict_rate_contended     412s / attempts in that run
  outbox_publish_events_per_s_notify|amqp    one relay draining BENCH_N pending events (default 2000)
  outbox_pending_age_ms_p99_notify|amqp      commit → broker confirm, a live relay under a steady producer
  library_ingest_ms_100_pages                text extraction of a 100-page PDF in the child process
  library_index_ms_100_pages                 the finalizer's index write for those 100 pages
  library_search_ms_p50|p99_10000_pages      search over 10,000 indexed pages (SQL + snippets): BENCH_SEARCH_DOCUMENTS
                                             (default 100) documents of 100 pages, named by their page count
RabbitMQ figures need AMQP_URL (e.g. amqp://guest:guest@127.0.0.1:5672/%2F); without it they are skipped.
"""

import multiprocessing
import os
import random
import statistics
import tempfile
import threading
import time
import uuid
from pathlib import Path

from scripts.bench.harness import BENCH_REPS, bench_database, django_setup, n_or, percentile, report

CLIENTS = 8
OPERATION = "pdf.index.text/v1"
ROOMY = {"active_jobs_per_requester": 1_000_000, "active_jobs_per_project": 1_000_000,
         "queued_jobs_global": 2_000_000}  # fmt: skip
WORDS = [f"{stem}{suffix}" for stem in ("harbour", "gull", "tide", "ledger", "quartz", "meadow", "lantern", "cobalt",
         "orchard", "saffron", "glacier", "thimble", "walrus", "juniper", "pylon", "ember") for suffix in
         ("", "s", "ing", "ed", "er", "ly", "ness", "ward", "ish", "ful")]  # fmt: skip


def page_text(rng: random.Random, words: int = 250) -> str:
    lines = [" ".join(rng.choices(WORDS, k=12)) for _ in range(words // 12)]
    return "\n".join(lines)


def _client(database_url: str, deployment: str, user_id: int, project_id, documents: list, n: int, barrier, out):
    os.environ.update(DATABASE_URL=database_url, QUIRE_DEPLOYMENT_FILE=deployment)
    django_setup()
    from library.exceptions import RevisionMismatch
    from library.models import LibraryDocument
    from library.services.acceptance import VersionUpload, library_version_accept
    from tests.library.pdfs import text_pdf

    pdfs = [text_pdf([f"client {os.getpid()} version {index}"]) for index in range(n)]
    accepted = conflicts = 0
    barrier.wait()
    started = time.perf_counter()
    for index, data in enumerate(pdfs):
        document_id = documents[index % len(documents)]
        while True:
            revision = LibraryDocument.objects.values_list("revision", flat=True).get(pk=document_id)
            upload = VersionUpload(project_id, document_id, revision, data, "bench.pdf")
            try:
                library_version_accept(actor_id=user_id, idempotency_key=uuid.uuid4().hex, upload=upload)
                accepted += 1
                break
            except RevisionMismatch:
                conflicts += 1
    out.put((accepted, conflicts, time.perf_counter() - started))


def acceptance(deployment: str, n: int) -> None:
    from django.contrib.auth import get_user_model

    from library.services.acceptance import VersionUpload, library_version_accept
    from tests.library.pdfs import text_pdf
    from workspace import services as workspace

    user = get_user_model().objects.create_user(username=f"bench-{time.time_ns()}", password="x" * 12)
    project = workspace.project_create(actor_id=user.pk, name="bench", project_type="latex")
    context = multiprocessing.get_context("spawn")
    for label in ("distinct", "contended"):
        rates, conflict_rates = [], []
        for _ in range(BENCH_REPS):
            first = [
                library_version_accept(
                    actor_id=user.pk,
                    idempotency_key=uuid.uuid4().hex,
                    upload=VersionUpload(project.pk, None, None, text_pdf([f"seed {index}"]), "seed.pdf"),
                ).document_id
                for index in range(CLIENTS if label == "distinct" else 1)
            ]
            barrier, out = context.Barrier(CLIENTS), context.Queue()
            processes = [
                context.Process(
                    target=_client,
                    args=(
                        os.environ["DATABASE_URL"],
                        deployment,
                        user.pk,
                        project.pk,
                        [first[index % len(first)]],
                        n,
                        barrier,
                        out,
                    ),
                )
                for index in range(CLIENTS)
            ]
            for process in processes:
                process.start()
            results = [out.get(timeout=600) for _ in processes]
            for process in processes:
                process.join()
            accepted, conflicts = sum(r[0] for r in results), sum(r[1] for r in results)
            rates.append(accepted / max(r[2] for r in results))
            conflict_rates.append(conflicts / (accepted + conflicts))
        config = f"{CLIENTS} client processes, {n} versions each, service level (PDF check + blob + transaction)"
        report(f"library_accept_versions_per_s_{label}", rates, unit="versions/s", n=CLIENTS * n, config=config)
        if label == "contended":
            report(
                "library_accept_conflict_rate_contended",
                conflict_rates,
                unit="ratio",
                n=CLIENTS * n,
                config="412 answers / attempts; a loser re-reads the revision and tries again",
            )


def _pending_insert(count: int) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO processing_outboxevent (event_id, kind, payload, created_at, available_at, attempts, "
            "last_error) SELECT gen_random_uuid(), 'bench.event', jsonb_build_object('n', n), now(), now(), 0, '' "
            "FROM generate_series(1, %s) AS n",
            [count],
        )


def _brokers(amqp_url: str | None):
    from django.conf import settings

    from processing.relay.brokers import AmqpBroker, NotifyBroker, quire_conninfo

    yield "notify", lambda: NotifyBroker(quire_conninfo(), channel=settings.OUTBOX_NOTIFY_CHANNEL)
    if amqp_url:
        yield "amqp", lambda: AmqpBroker(amqp_url, exchange="quire.bench", queue="quire.bench.outbox")
    else:
        print("  (AMQP_URL unset: RabbitMQ figures skipped)")


def _relay_drain(relay) -> int:
    """Run passes until nothing due is left; the number of events this relay published."""
    published = 0
    while (result := relay.run_once()).claimed:
        published += result.published
    return published


def relay_rate(name: str, make_broker, n: int) -> None:
    """Events published per second by one relay, counting only the ``n`` events this step inserted."""
    from processing.relay.relay import OutboxRelay

    rates = []
    for _ in range(BENCH_REPS):
        relay = OutboxRelay(make_broker(), batch=200)
        _relay_drain(relay)  # leftovers (the acceptance step's events) are not part of this figure
        _pending_insert(n)
        started = time.perf_counter()
        published = _relay_drain(relay)
        rates.append(published / (time.perf_counter() - started))
        relay.broker.close()
        if published != n:
            print(f"  ({name}: {n - published} of {n} events not confirmed by the broker)")
    report(f"outbox_publish_events_per_s_{name}", rates, unit="events/s", n=n, config="1 relay, batches of 200")


def relay_pending_age(name: str, make_broker, n: int) -> None:
    from django.db import transaction

    from processing.kernel.outbox import outbox_emit
    from processing.relay.relay import OutboxRelay

    p99s = []
    for _ in range(BENCH_REPS):
        stop = threading.Event()
        relay = OutboxRelay(make_broker())
        thread = threading.Thread(target=_relay_until, args=(relay, stop))
        thread.start()
        time.sleep(0.5)  # the relay connects and starts listening
        marker = uuid.uuid4().hex
        for index in range(n):
            with transaction.atomic():
                outbox_emit(kind="bench.age", payload={"marker": marker, "n": index})
            time.sleep(0.002)  # a steady producer, not a burst
        while _undispatched(marker):
            time.sleep(0.05)
        stop.set()
        thread.join()
        p99s.append(_age_p99_ms(marker))
    report(
        f"outbox_pending_age_ms_p99_{name}",
        p99s,
        unit="ms",
        n=n,
        config="commit → confirm, live relay woken by LISTEN, producer ~1 event / 2 ms",
    )


def _relay_until(relay, stop: threading.Event) -> None:
    from django.db import connection

    relay.run(stop=stop, idle_seconds=1.0)
    connection.close()


def _undispatched(marker: str) -> int:
    from processing.models import OutboxEvent

    return OutboxEvent.objects.filter(payload__marker=marker, dispatched_at__isnull=True).count()


def _age_p99_ms(marker: str) -> float:
    from processing.models import OutboxEvent

    ages = [
        (dispatched - created).total_seconds() * 1000
        for created, dispatched in OutboxEvent.objects.filter(payload__marker=marker).values_list(
            "created_at", "dispatched_at"
        )
    ]
    return percentile(ages, 0.99)


def ingestion() -> tuple[object, list[str]]:
    import threading as threads

    from quire_worker.contracts import Limits
    from quire_worker.processors.pdf.index_text import PdfTextProcessor
    from tests.library.pdfs import text_pdf
    from tests.worker.executors import SubprocessTestExecutor

    rng = random.Random(7)
    texts = [page_text(rng) for _ in range(100)]
    data = text_pdf(texts)
    timings = []
    for _ in range(BENCH_REPS):
        with tempfile.TemporaryDirectory() as root:
            input_dir, output_dir = Path(root, "in"), Path(root, "out")
            input_dir.mkdir(), output_dir.mkdir()
            (input_dir / "input.pdf").write_bytes(data)
            started = time.perf_counter()
            PdfTextProcessor().run(
                input_dir=input_dir,
                output_dir=output_dir,
                request={},
                limits=Limits(),
                cancel=threads.Event(),
                executor=SubprocessTestExecutor(),
            )
            timings.append((time.perf_counter() - started) * 1000)
    report(
        "library_ingest_ms_100_pages",
        timings,
        unit="ms",
        n=100,
        config=f"pypdf {len(data) // 1024} KiB PDF, ~250 words/page, child process without sandbox",
    )
    return data, texts


def _documents_with_pages(data: bytes, texts: list[str], count: int) -> tuple[object, list[float]]:
    """``count`` documents of 100 pages; per repetition, the median time to index one new version of each.

    The first repetition creates the documents, each later one replaces every document's version, so search
    still sees ``count`` x 100 current pages; the superseded versions' rows stay in the index, as in use.
    """
    from django.contrib.auth import get_user_model

    from workspace import services as workspace_services

    user = get_user_model().objects.create_user(username=f"search-{time.time_ns()}", password="x" * 12)
    project = workspace_services.project_create(actor_id=user.pk, name="search", project_type="latex")
    documents: list = [None] * count
    medians = []
    for rep in range(BENCH_REPS):
        timings = []
        for index in range(count):
            documents[index], elapsed_ms = _version_indexed(
                user.pk, project.pk, documents[index], data, texts, key=f"doc-{rep}-{index}", rotation=index % 7
            )
            timings.append(elapsed_ms)
        medians.append(statistics.median(timings))
    return project, medians


def _version_indexed(
    user_id: int, project_id, document_id, data: bytes, texts: list[str], *, key: str, rotation: int
) -> tuple[object, float]:
    """Accept a version (a new document when ``document_id`` is None) and time the finalizer's index write."""
    from django.db import transaction

    from library import selectors
    from library.models import LibraryDocument
    from library.services.acceptance import VersionUpload, library_version_accept
    from library.services.indexing import index_version

    revision = None
    if document_id is not None:
        revision = LibraryDocument.objects.values_list("revision", flat=True).get(pk=document_id)
    accepted = library_version_accept(
        actor_id=user_id,
        idempotency_key=key,
        upload=VersionUpload(project_id, document_id, revision, data, f"{key}.pdf"),
    )
    version = selectors.version_of_job(job_id=accepted.job_id)
    pages = list(enumerate(texts[rotation:] + texts[:rotation], start=1))
    started = time.perf_counter()
    with transaction.atomic():
        index_version(version, pages, project_id=project_id)
    return accepted.document_id, (time.perf_counter() - started) * 1000


def search(data: bytes, texts: list[str]) -> None:
    from library.facade import library_search

    documents = int(os.environ.get("BENCH_SEARCH_DOCUMENTS", "100"))
    project, index_medians = _documents_with_pages(data, texts, documents)
    report(
        "library_index_ms_100_pages",
        index_medians,
        unit="ms",
        n=100,
        config="finalizer write: upsert 100 page rows with to_tsvector + searchable advance; "
        f"median of {documents} versions per repetition",
    )
    rng = random.Random(11)
    queries = [rng.choice(WORDS) for _ in range(60)] + [" ".join(rng.sample(WORDS, 2)) for _ in range(60)]
    queries += [f'"{rng.choice(WORDS)} {rng.choice(WORDS)}"' for _ in range(40)] + ["zzzz nothing"] * 40
    p50s, p99s = [], []
    for _ in range(BENCH_REPS):
        latencies = []
        for query in queries:
            started = time.perf_counter()
            library_search(project_id=project.pk, query=query)
            latencies.append((time.perf_counter() - started) * 1000)
        p50s.append(percentile(latencies, 0.5))
        p99s.append(percentile(latencies, 0.99))
    config = f"{documents} documents x 100 pages, 20 hits with ts_headline snippets, words / pairs / phrases / misses"
    report(f"library_search_ms_p50_{documents * 100}_pages", p50s, unit="ms", n=len(queries), config=config)
    report(f"library_search_ms_p99_{documents * 100}_pages", p99s, unit="ms", n=len(queries), config=config)


def main() -> None:
    with bench_database("quire_bench_library"), tempfile.TemporaryDirectory() as root:
        django_setup()
        from django.conf import settings

        from scripts.bench.processes import deployment_write

        deployment = str(deployment_write(Path(root), operations=[OPERATION], limits=ROOMY))
        settings.QUIRE_DEPLOYMENT_FILE = os.environ["QUIRE_DEPLOYMENT_FILE"] = deployment
        print("PDF library benchmark")
        acceptance(deployment, n_or(25))
        for name, make_broker in _brokers(os.environ.get("AMQP_URL")):
            relay_rate(name, make_broker, n_or(2000))
            relay_pending_age(name, make_broker, min(n_or(2000), 500))
        data, texts = ingestion()
        search(data, texts)
        _amqp_cleanup(os.environ.get("AMQP_URL"))
        from django.db import connections

        connections.close_all()


def _amqp_cleanup(url: str | None) -> None:
    if not url:
        return
    import pika

    connection = pika.BlockingConnection(pika.URLParameters(url))
    channel = connection.channel()
    channel.queue_delete("quire.bench.outbox")
    channel.exchange_delete("quire.bench")
    connection.close()


if __name__ == "__main__":
    main()
