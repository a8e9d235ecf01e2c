"""The claim walks the queue's index in FIFO order however stale the table's statistics are.

Jobs arrive in bursts between two analyzes of the job table. Planned with statistics that say the
queue is empty, the claim's candidate query once read every queued row (a bitmap scan) and sorted them,
for every candidate: its cost grew with the queue's depth; and a generic plan of its writes, cached on the
connection, joined the job table by a scan. Walking the index reads only the head, the first time the
connection claims and once its statements' plans are cached. The claim plans its candidates without bitmap
scans or sorts, in its own transaction only (processing/queue/claims.py).
"""

import pytest
from django.db import connection

from processing.queue.claims import claims_acquire
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory

pytestmark = pytest.mark.django_db

LATEX = "latex.compile.pdf/v1"
BURST = 2000


def queued_burst_like(job_id: str, count: int) -> None:
    """``count`` queued copies of the job, in one statement (as a burst of submissions lands between analyzes)."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO processing_processingjob
            SELECT (json_populate_record(job, json_build_object('id', gen_random_uuid(), 'state', 'queued',
                                                                'created_at', clock_timestamp()))).*
            FROM processing_processingjob AS job, generate_series(1, %s)
            WHERE job.id = %s
            """,
            [count, job_id],
        )


def heap_blocks_read_by(call) -> int:
    """Job-table heap blocks this transaction read during ``call``."""
    query = "SELECT pg_stat_get_xact_blocks_fetched('processing_processingjob'::regclass)"
    with connection.cursor() as cursor:
        before = cursor.execute(query).fetchone()[0]
        call()
        return cursor.execute(query).fetchone()[0] - before


def heap_blocks_of_a_claim_in_a_burst(client, project, *, claims_before: int) -> tuple[list, int]:
    """Claim ``claims_before`` jobs, analyze (one queued job), let a burst land, then claim the oldest."""
    session = WorkerSessionFactory(processors={LATEX: 50})
    for n in range(claims_before):  # the connection's statements run often enough to be planned generically
        submit_build(client, project, key=f"earlier-{n}")
        assert claims_acquire(session_id=session.pk, offers={LATEX: 1})
    oldest = submit_build(client, project, key="oldest").json()["id"]
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE processing_processingjob")  # the statistics: one queued job
    queued_burst_like(oldest, BURST)
    claims = []
    blocks = heap_blocks_read_by(lambda: claims.extend(claims_acquire(session_id=session.pk, offers={LATEX: 1})))
    assert [str(claim.job_id) for claim in claims] == [oldest], "FIFO"
    return claims, blocks


@pytest.mark.parametrize("claims_before", [0, 8], ids=["first-claim", "cached-plans"])
def test_a_claim_reads_the_head_of_a_deep_queue_that_the_statistics_call_empty(
    api_client_for, owner, project, configure_deployment, claims_before
):
    configure_deployment(limits={"running_jobs_per_requester": 50, "running_jobs_per_project": 50})

    _, blocks = heap_blocks_of_a_claim_in_a_burst(api_client_for(owner), project, claims_before=claims_before)

    # Reading every queued row took a block per few jobs (over 100 here); the head is a few blocks (10 to 26
    # seen, as autovacuum and the earlier claims' rows leave them).
    assert blocks < 40, f"the claim read {blocks} heap blocks of the job table"


@pytest.mark.django_db(transaction=True)
def test_bitmap_scans_and_sorts_are_off_for_the_claims_transaction_only(api_client_for, owner, project):
    submit_build(api_client_for(owner), project, key="only")
    session = WorkerSessionFactory(processors={LATEX: 1})

    assert claims_acquire(session_id=session.pk, offers={LATEX: 1})

    with connection.cursor() as cursor:
        assert cursor.execute("SHOW enable_bitmapscan").fetchone() == ("on",)
        assert cursor.execute("SHOW enable_sort").fetchone() == ("on",)
