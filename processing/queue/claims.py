"""Claiming work (docs/architecture.md §4): one short transaction per acquire, database time for the lease.

Capacity is never stored: the agent offers its locally free permits, and in the
transaction that creates the attempts Core intersects the offer with the
session's registered slot ceiling minus its unexpired running claims.
Selection is FIFO by creation among claimable jobs of the offered operations
(``ProcessingJob.objects.claimable``), ``FOR UPDATE SKIP LOCKED``, passing over
jobs whose requester or project already holds its running limit
(``within_running_limits``).

Those limits and the session's slots are made exact under concurrency by
transaction-scoped advisory locks on the session and on the candidates'
requesters and projects, taken by the first candidates' statement in key order
(so two acquires cannot deadlock), and then checked in a later statement (a
fresh snapshot under READ COMMITTED, so it sees what concurrent claims
committed). The candidates' statement keeps their ids for the rest of its
transaction, so the statements after it can be sent with it, before the claim
knows its candidates. A single claim, an agent refilling the slot a delivery
freed, is one round trip outside a caller's transaction: the candidates'
statement and the write, which checks the candidate itself
(``_admitted_query``: the same ``within_running_limits`` rule, the fair share
and the session's slots), in one implicit transaction. An acquire of several
recounts its candidates in the candidates' round trip (``_Tally``) and writes
them with COMMIT in a second. Inside a caller's transaction each statement is a
round trip of its own. A later round of candidates, already holding locks, only
tries theirs and passes over a candidate another acquire holds. Each claim comes
with a download ticket for its input and an upload ticket per result role of its
operation; the writes are processing/queue/claim_writes.py's. Every statement is
compiled from the ORM once per process and prepared per connection
(``processing.queue.prepared_query.PreparedQuery``), except the writes and locks, which are plain
SQL files in ``sql/``.
"""

import json
import logging
import uuid
from collections import Counter
from contextlib import contextmanager, suppress
from pathlib import Path

import psycopg
from django.db import transaction
from django.db.models import CharField, Count, OuterRef, Subquery, Value
from django.db.models.functions import Cast, Now

from foundation.database.prepared import autocommitting, prepared_cursor, statements_connection, statements_lent
from processing.kernel.advisory import advisory_key
from processing.kernel.attempt_log import claim_log
from processing.kernel.configuration import deployment, limits
from processing.models import (
    JobState,
    OperationPause,
    ProcessingBlob,
    ProcessingJob,
    SessionState,
    WorkerProcessor,
)
from processing.queue.claim_writes import (
    Candidate,
    Claim,
    LoneWrite,
    holding_slots,
    kept_candidates,
    partitions_of,
    written,
)
from processing.queue.prepared_query import PreparedQuery

logger = logging.getLogger(__name__)

CANDIDATE_ROUNDS = 8


_CANDIDATE_FIELDS = (
    "id", "operation", "requester_id", "project_id", "attempt_count", "input_blob_id", "input_digest", "options",
    "input_profile", "input_filename", "input_size", "offered_contract", "slots", "now",
)  # fmt: skip


class _Tally:
    """What the recount saw running (requesters' and projects' jobs by partition, the session's attempts by
    operation), plus the claims this acquire has made so far."""

    def __init__(self, counts, *, offers: dict[str, int]):
        self.running = Counter()
        for kind, key, operation, n in counts:
            self.running[kind, key, _partition_of(operation).name if kind != "operation" else ""] += n
        self.offers = offers
        self.claimed = Counter()

    def admits(self, candidate: Candidate) -> bool:
        operation, partition = candidate.operation, _partition_of(candidate.operation)
        project = str(candidate.project_id)
        return (
            self.running["requester", str(candidate.requester_id), partition.name]
            < partition.running_jobs_per_requester
            and (
                candidate.project_id is None
                or self.running["project", project, partition.name] < partition.running_jobs_per_project
            )
            and self.claimed[operation] < self.offers[operation]
            and self.running["operation", operation, ""] < candidate.slots
        )

    def take(self, candidate: Candidate) -> None:
        partition = _partition_of(candidate.operation).name
        self.running["requester", str(candidate.requester_id), partition] += 1
        if candidate.project_id is not None:
            self.running["project", str(candidate.project_id), partition] += 1
        self.running["operation", candidate.operation, ""] += 1
        self.claimed[candidate.operation] += 1


def _partition_of(operation: str):
    return deployment().partition_of(operation)


def claims_acquire(*, session_id: uuid.UUID, offers: dict[str, int], count: int = 1) -> list[Claim]:
    """Create up to ``count`` attempts for this session within its offer, FIFO; empty when nothing fits.

    Its own transaction, or part of the caller's (a release and a new claim of the same job may commit
    together), so not durable.
    """
    limit = limits()
    offers = {operation: permits for operation, permits in offers.items() if permits > 0}
    count = min(count, sum(offers.values()))
    if count <= 0:
        return []
    if autocommitting():
        with statements_lent():
            claims = (_claimed_lone if count == 1 else _claimed_alone)(session_id, offers, count, limit)
        if claims is None:  # a lone candidate over a limit after all: from the start, passing over it
            with transaction.atomic():
                claims = _claimed(session_id, offers, count, limit)
    else:
        with transaction.atomic():
            claims = _claimed(session_id, offers, count, limit)
    for claim in claims:
        logger.info("job claimed", extra=claim_log(claim, session_id))
    return claims


def _claimed(session_id: uuid.UUID, offers: dict[str, int], count: int, limit) -> list[Claim]:
    """The claims of an acquire in a transaction Django has open, each statement a round trip of its own."""
    seen: list[uuid.UUID] = []
    if count == 1:
        head = _candidates(session_id, list(offers), 1, seen, limit, locking=True)
        if not head:
            return []
        if claims := written(session_id, head, limit, admitting=True):
            return claims
        seen.append(head[0].id)  # over a limit after all: on to the next candidates
    chosen = _choose(session_id, offers, count, limit, seen=seen)
    return written(session_id, chosen, limit, admitting=False) if chosen else []


def _claimed_lone(session_id: uuid.UUID, offers: dict[str, int], count: int, limit) -> list[Claim] | None:
    """One claim in a transaction of its own, the hot path of an agent refilling a slot, in one round trip:
    the planner settings, the locking candidates' statement and the checked write of the candidate it kept
    (claim_write_lone.sql), sent together in a pipeline, which PostgreSQL runs as one implicit transaction
    that commits at the pipeline's end. Each is a statement of its own, so the write's check sees what the
    claims that held the locks before committed. None when the candidate was over a limit after all."""
    operations = list(offers)
    candidates_sql, candidates_params = _locking_candidates_statement(session_id, operations, 1)
    lone = LoneWrite.of(session_id, operations, limit)
    with _own_transaction(), prepared_cursor() as settings, prepared_cursor() as found, prepared_cursor() as write:
        with statements_connection().pipeline():
            settings.execute(_PLANNED_BY_INDEX)
            found.execute(candidates_sql, candidates_params)
            write.execute(lone.sql, lone.params)
        candidates, attempts = [_candidate_of(row) for row in found.fetchall()], write.fetchall()
    if not candidates:
        return []
    return lone.claims(candidates[0], *attempts[0]) if attempts else None


def _claimed_alone(session_id: uuid.UUID, offers: dict[str, int], count: int, limit) -> list[Claim] | None:
    """The claims of an acquire of several in a transaction of its own, in two round trips: BEGIN, the planner
    settings, the locking candidates' statement and the recount of the candidates it kept, sent together; then
    the write and COMMIT. None when the candidates that fit are fewer than asked for while the queue may hold
    more: later rounds of candidates run in a transaction Django knows of (``_claimed``'s), where the
    statements of a round's shape can be compiled."""
    with _own_transaction():
        head, tally = _first_round(session_id, offers, count, limit)
        chosen = _choose(session_id, offers, count, limit, seen=[], first=(head, tally), rounds=1) if head else []
        if len(chosen) < count and len(head) == count:
            _committed()
            return None
        if not chosen:
            _committed()
            return []
        return written(session_id, chosen, limit, admitting=False, committing=True)


def _first_round(session_id, offers: dict[str, int], count: int, limit) -> tuple[list[Candidate], "_Tally"]:
    """An acquire of several's first round trip: it opens the transaction, reads and locks up to ``count``
    candidates and recounts the running jobs of those it kept."""
    operations = list(offers)
    candidates_sql, candidates_params = _locking_candidates_statement(session_id, operations, count)
    recount_sql, recount_params = _RECOUNT_KEPT.statement(session_id=session_id, operations=sorted(offers))
    with prepared_cursor() as control, prepared_cursor() as found, prepared_cursor() as recount:
        with statements_connection().pipeline():
            control.execute("BEGIN")
            control.execute(_PLANNED_BY_INDEX)
            found.execute(candidates_sql, candidates_params)
            recount.execute(recount_sql, recount_params)
        return [_candidate_of(row) for row in found.fetchall()], _Tally(recount.fetchall(), offers=offers)


@contextmanager
def _own_transaction():
    """Around statements that open a transaction with BEGIN and end it with COMMIT themselves: on any error,
    psycopg's own rollback ends the transaction the server has open. On a broken connection there is none to
    roll back, and Django closes that connection after the error it raised."""
    try:
        yield
    except BaseException:
        with suppress(psycopg.Error):
            statements_connection().rollback()
        raise


def _committed() -> None:
    with prepared_cursor() as cursor:
        cursor.execute("COMMIT")


def claim_acquire(*, session_id: uuid.UUID, offers: dict[str, int]) -> Claim | None:
    """Create the next attempt for this session, or return None when nothing fits its offer."""
    claims = claims_acquire(session_id=session_id, offers=offers, count=1)
    return claims[0] if claims else None


def _choose(
    session_id: uuid.UUID,
    offers: dict[str, int],
    count: int,
    limit,
    *,
    seen: list,
    first: tuple[list[Candidate], "_Tally"] | None = None,
    rounds: int = CANDIDATE_ROUNDS,
) -> list[Candidate]:
    """The jobs this acquire claims: FIFO candidates, kept only where the recount says they fit. With ``seen``,
    a single claim's head candidate was over a limit, and its locks are held. ``first``: the first round's
    candidates, read with their locks, and their recount; ``rounds``, at most so many rounds of candidates."""
    chosen: list[Candidate] = []
    seen = list(seen)
    tally = None
    for _ in range(rounds):
        open_operations = [op for op in offers if tally is None or tally.claimed[op] < offers[op]]
        wanted = count - len(chosen)
        waiting = tally is None and not seen
        if first is not None and tally is None:
            candidates, counted = first
        else:
            candidates = _candidates(session_id, open_operations, wanted, seen, limit, locking=waiting)
            counted = None
        if not candidates:
            break
        seen += [candidate.id for candidate in candidates]
        locked = candidates if waiting else _tried(candidates)
        tally = counted if counted is not None else _recount(session_id, locked, offers, limit)
        for candidate in chosen:  # this acquire's earlier claims are not written yet: count them in
            tally.take(candidate)
        for candidate in locked:
            if tally.admits(candidate):
                tally.take(candidate)
                chosen.append(candidate)
        if len(chosen) == count or len(candidates) < wanted:  # all claimed, or the queue has no more
            break
    return chosen


def _candidates(session_id, operations, wanted: int, seen: list, limit, *, locking: bool) -> list[Candidate]:
    """Up to ``wanted`` claimable jobs of the operations this session's live processors offer, locked, FIFO;
    when ``locking``, with the advisory locks of the session and of their requesters and projects too."""
    rows = _CANDIDATES.rows(
        literals=(wanted, partitions_of(operations)),
        before=(_PLANNED_BY_INDEX,) if locking else (),  # locking: the transaction's first statement
        around=_LOCKING_CANDIDATES if locking else "",
        after=[advisory_key(SESSION_LOCK, session_id)] if locking else [],
        session_id=session_id,
        operations=list(operations),
        seen=list(seen),
    )
    return [_candidate_of(row) for row in rows]


def _locking_candidates_statement(session_id, operations: list[str], wanted: int) -> tuple[str, list]:
    """The statement of ``_candidates(..., locking=True)`` with its parameters, for a pipeline of one's own."""
    return _CANDIDATES.statement(
        literals=(wanted, partitions_of(operations)),
        around=_LOCKING_CANDIDATES,
        after=[advisory_key(SESSION_LOCK, session_id)],
        session_id=session_id,
        operations=operations,
        seen=[],
    )


def _candidate_of(row: tuple) -> Candidate:
    return Candidate(*row[:7], json.loads(row[7]), *row[8:])


def _candidates_query(wanted, partitions, *, session_id, operations, seen):
    # The session's live processor of the job's operation, looked up for the rows the index walk keeps (a
    # subplan, not a join the planner could reorder ahead of the walk).
    processor = WorkerProcessor.objects.filter(
        session_id=session_id,
        operation=OuterRef("operation"),
        healthy=True,
        session__state=SessionState.ACTIVE,
        session__expires_at__gt=Now(),
    )
    return (
        ProcessingJob.objects.claimable(operations)
        .exclude(operation__in=OperationPause.objects.values("operation"))  # queue/pauses.py
        .within_running_limits(partitions)
        .within_fair_share(operations)
        .exclude(id__in=seen)
        .annotate(
            slots=Subquery(processor.values("slots")),
            offered_contract=Subquery(processor.values("processor_contract")),
            input_size=Subquery(ProcessingBlob.objects.filter(id=OuterRef("input_blob_id")).values("size_bytes")),
            now=Now(),
        )
        .filter(slots__isnull=False)
        .select_for_update(skip_locked=True, of=("self",))
        .values_list(*_CANDIDATE_FIELDS)[:wanted]
    )


_CANDIDATES = PreparedQuery(_candidates_query)
# The claim's statements are planned once per connection, generically, and for the plans to walk the
# queue's index from its head and find jobs by key whatever the statistics say (planned with statistics from
# before a burst of submissions, the queue "empty", the candidates were read by a bitmap scan of every queued
# row, or by another index, and sorted; the writes joined the job table by a scan), the claim's transaction
# plans without bitmap scans, sorts or sequential scans: every statement in it reads by an index, and the
# planner would take a seq scan only for a table it thinks small, which the job table stops being in a burst
# (tests/processing/queue/test_claim_reads_the_queue_from_its_head.py). For this transaction only.
_PLANNED_BY_INDEX = (
    "SELECT set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true),"
    " set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_generic_plan', true)"
)


def _tried(candidates: list[Candidate]) -> list[Candidate]:
    """A later round holds locks already, where waiting for more could deadlock: it only tries the new
    candidates' requesters' and projects' locks, and drops the candidates whose locks it did not get."""
    keys_of = {candidate.id: _lock_keys(candidate) for candidate in candidates}
    with prepared_cursor() as cursor:
        rows = cursor.execute(_TRY_EACH, [sorted({key for keys in keys_of.values() for key in keys})]).fetchall()
    refused = {key for (key,) in rows}
    return [candidate for candidate in candidates if not refused & set(keys_of[candidate.id])]


def _lock_keys(candidate: Candidate) -> list[int]:
    """As claim_locking_candidates.sql derives them (tests/processing/queue/test_races.py checks)."""
    keys = [advisory_key(REQUESTER_LOCK, candidate.requester_id)]
    return keys + ([advisory_key(PROJECT_LOCK, candidate.project_id)] if candidate.project_id else [])


SESSION_LOCK, REQUESTER_LOCK, PROJECT_LOCK = "claiming-session", "running-requester", "running-project"
_SQL = Path(__file__).with_name("sql")
_LOCKING_CANDIDATES = (_SQL / "claim_locking_candidates.sql").read_text()
_TRY_EACH = (_SQL / "claim_try_locks.sql").read_text()


def _recount(session_id, candidates: list[Candidate], offers, limit) -> _Tally:
    """Count again, after the locks: the running jobs of the candidates' requesters and projects, and the
    session's unexpired running attempts by operation, in one statement."""
    counts = _RECOUNT.rows(
        session_id=session_id,
        requesters=sorted({candidate.requester_id for candidate in candidates}),
        projects=sorted({candidate.project_id for candidate in candidates if candidate.project_id}),
        operations=sorted(offers),
    )
    return _Tally(counts, offers=offers)


def _recount_query(*, session_id, requesters, projects, operations):
    return _recounted(session_id, requesters, projects, operations)


def _recount_kept_query(*, session_id, operations):
    """The recount of the candidates the locking candidates' statement kept, sent before they are known."""
    kept = ProcessingJob.objects.filter(id__in=kept_candidates())
    projects = kept.filter(project_id__isnull=False).values("project_id")
    return _recounted(session_id, kept.values("requester_id"), projects, operations)


def _recounted(session_id, requesters, projects, operations):
    running = ProcessingJob.objects.filter(state=JobState.RUNNING)
    by_requester = _counted(running.filter(requester_id__in=requesters), "requester")
    by_project = _counted(running.filter(project_id__in=projects), "project")
    by_operation = _counted(holding_slots(session_id).filter(operation__in=operations), "operation")
    return by_requester.union(by_project, by_operation, all=True)


def _counted(rows, field: str):
    """(field, the value as text, the operation, how many rows have both), grouped by ``<field>_id`` or
    ``field`` and by operation (whose partition the tally looks up)."""
    column = field if field == "operation" else f"{field}_id"
    return (
        rows.values(column, "operation")
        .annotate(kind=Value(field, output_field=CharField()), key=Cast(column, CharField()), n=Count("*"))
        .values_list("kind", "key", "operation", "n")
    )


_RECOUNT = PreparedQuery(_recount_query)
_RECOUNT_KEPT = PreparedQuery(_recount_kept_query)
