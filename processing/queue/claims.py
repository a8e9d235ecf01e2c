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
committed). For a single claim, the common case of an agent refilling one slot,
that check is part of the write statement (``_admitted_query``: the same
``within_running_limits`` rule and the session's slots), and outside a caller's
transaction BEGIN and COMMIT ride with the two statements: two round trips in
all. Several claims are recounted first (``_Tally``) and written together; a
later round of candidates, already holding locks, only tries theirs and passes
over a candidate another acquire holds. Each claim comes with a
download ticket for its input and an upload ticket per result role of its
operation. Every statement is compiled from the ORM once per process and
prepared per connection (``config.prepared.PreparedQuery``), except the writes
and locks, which are plain SQL files in ``sql/``.
"""

import json
import logging
import uuid
from collections import Counter
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import psycopg
from django.db import connection, transaction
from django.db.models import CharField, Count, OuterRef, Subquery, Value
from django.db.models.functions import Cast, Coalesce, Now

from config.prepared import PreparedQuery, prepared_cursor
from processing.advisory import advisory_key
from processing.attempt_log import claim_log
from processing.configuration import deployment, limits
from processing.models import (
    AttemptState,
    JobState,
    OperationPause,
    ProcessingAttempt,
    ProcessingBlob,
    ProcessingJob,
    SessionState,
    TransferKind,
    WorkerProcessor,
)
from processing.operations import operation_get
from processing.transfers import IssuedTicket, ticket_secret_new

logger = logging.getLogger(__name__)

CANDIDATE_ROUNDS = 8


@dataclass(frozen=True)
class Claim:
    job_id: uuid.UUID
    attempt_id: int
    attempt_number: int
    claim_id: uuid.UUID
    operation: str
    processor_contract: str
    lease_expires_at: datetime
    input_blob_id: int
    input_digest: str
    options: dict
    input_profile: str
    input_filename: str
    project_id: uuid.UUID | None
    input_size: int
    download: IssuedTicket
    uploads: dict[str, IssuedTicket]  # result role → its upload ticket


@dataclass
class _Candidate:
    id: uuid.UUID
    operation: str
    requester_id: int
    project_id: uuid.UUID | None
    attempt_count: int
    input_blob_id: int
    input_digest: str
    options: dict
    input_profile: str
    input_filename: str
    input_size: int
    processor_contract: str
    slots: int
    now: datetime


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

    def admits(self, candidate: _Candidate) -> bool:
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

    def take(self, candidate: _Candidate) -> None:
        partition = _partition_of(candidate.operation).name
        self.running["requester", str(candidate.requester_id), partition] += 1
        if candidate.project_id is not None:
            self.running["project", str(candidate.project_id), partition] += 1
        self.running["operation", candidate.operation, ""] += 1
        self.claimed[candidate.operation] += 1


def _partition_of(operation: str):
    return deployment().partition_of(operation)


def _partitions_of(operations) -> tuple:
    """The partitions the operations belong to, in the deployment's order: the claim's statements' constants."""
    return tuple(partition for partition in deployment().partitions if any(map(partition.holds, operations)))


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
    if count == 1 and connection.get_autocommit() and not connection.in_atomic_block:
        claims = _claimed_alone(session_id, offers, limit)
    else:
        with transaction.atomic():
            claims = _claimed(session_id, offers, count, limit)
    for claim in claims:
        logger.info("job claimed", extra=claim_log(claim, session_id))
    return claims


def _claimed(session_id: uuid.UUID, offers: dict[str, int], count: int, limit) -> list[Claim]:
    seen: list[uuid.UUID] = []
    if count == 1:
        head = _candidates(session_id, list(offers), 1, seen, limit, locking=True)
        if not head:
            return []
        if claims := _written(session_id, head, limit, admitting=True):
            return claims
        seen.append(head[0].id)  # over a limit after all: on to the next candidates
    chosen = _choose(session_id, offers, count, limit, seen=seen)
    return _written(session_id, chosen, limit, admitting=False) if chosen else []


def _claimed_alone(session_id: uuid.UUID, offers: dict[str, int], limit) -> list[Claim]:
    """A single claim in a transaction of its own, the hot path of an agent refilling a slot: the transaction
    is opened in the candidates' round trip and committed in the write's, two round trips in all (Django's
    ``atomic`` would send BEGIN and COMMIT in round trips of their own). When the head candidate is over a
    limit after all, the claim starts again in a transaction of ``_claimed``'s, which passes over it."""
    try:
        head = _candidates(session_id, list(offers), 1, [], limit, locking=True, opening=True)
        if not head:
            _committed()
            return []
        claims = _written(session_id, head, limit, admitting=True, committing=True)
    except BaseException:
        # psycopg's own: rolls back the transaction the server has open. On a broken connection there is none
        # to roll back, and Django closes that connection after the error it raised.
        with suppress(psycopg.Error):
            connection.connection.rollback()
        raise
    if claims:
        return claims
    with transaction.atomic():  # from the start, with the locks that make the recount exact
        return _claimed(session_id, offers, 1, limit)


def _committed() -> None:
    with prepared_cursor() as cursor:
        cursor.execute("COMMIT")


def claim_acquire(*, session_id: uuid.UUID, offers: dict[str, int]) -> Claim | None:
    """Create the next attempt for this session, or return None when nothing fits its offer."""
    claims = claims_acquire(session_id=session_id, offers=offers, count=1)
    return claims[0] if claims else None


def _choose(session_id: uuid.UUID, offers: dict[str, int], count: int, limit, *, seen: list) -> list[_Candidate]:
    """The jobs this acquire claims: FIFO candidates, kept only where the recount says they fit. With ``seen``,
    a single claim's head candidate was over a limit, and its locks are held."""
    chosen: list[_Candidate] = []
    seen = list(seen)
    tally = None
    for _ in range(CANDIDATE_ROUNDS):
        open_operations = [op for op in offers if tally is None or tally.claimed[op] < offers[op]]
        wanted = count - len(chosen)
        waiting = tally is None and not seen
        candidates = _candidates(session_id, open_operations, wanted, seen, limit, locking=waiting)
        if not candidates:
            break
        seen += [candidate.id for candidate in candidates]
        locked = candidates if waiting else _tried(candidates)
        tally = _recount(session_id, locked, offers, limit)
        for candidate in chosen:  # this acquire's earlier claims are not written yet: count them in
            tally.take(candidate)
        for candidate in locked:
            if tally.admits(candidate):
                tally.take(candidate)
                chosen.append(candidate)
        if len(chosen) == count or len(candidates) < wanted:  # all claimed, or the queue has no more
            break
    return chosen


def _candidates(
    session_id, operations, wanted: int, seen: list, limit, *, locking: bool, opening: bool = False
) -> list[_Candidate]:
    """Up to ``wanted`` claimable jobs of the operations this session's live processors offer, locked, FIFO;
    when ``locking``, with the advisory locks of the session and of their requesters and projects too;
    ``opening``, the transaction's BEGIN is sent with them."""
    begin = ("BEGIN",) if opening else ()
    rows = _CANDIDATES.rows(
        literals=(wanted, _partitions_of(operations)),
        before=(*begin, _PLANNED_BY_INDEX) if locking else begin,  # locking: the transaction's first statement
        around=_LOCKING_CANDIDATES if locking else "",
        after=[advisory_key(SESSION_LOCK, session_id)] if locking else [],
        session_id=session_id,
        operations=list(operations),
        seen=list(seen),
    )
    return [_Candidate(*row[:7], json.loads(row[7]), *row[8:]) for row in rows]


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


def _tried(candidates: list[_Candidate]) -> list[_Candidate]:
    """A later round holds locks already, where waiting for more could deadlock: it only tries the new
    candidates' requesters' and projects' locks, and drops the candidates whose locks it did not get."""
    keys_of = {candidate.id: _lock_keys(candidate) for candidate in candidates}
    with prepared_cursor() as cursor:
        rows = cursor.execute(_TRY_EACH, [sorted({key for keys in keys_of.values() for key in keys})]).fetchall()
    refused = {key for (key,) in rows}
    return [candidate for candidate in candidates if not refused & set(keys_of[candidate.id])]


def _lock_keys(candidate: _Candidate) -> list[int]:
    """As claim_locking_candidates.sql derives them (tests/processing/queue/test_races.py checks)."""
    keys = [advisory_key(REQUESTER_LOCK, candidate.requester_id)]
    return keys + ([advisory_key(PROJECT_LOCK, candidate.project_id)] if candidate.project_id else [])


SESSION_LOCK, REQUESTER_LOCK, PROJECT_LOCK = "claiming-session", "running-requester", "running-project"
_SQL = Path(__file__).with_name("sql")
_LOCKING_CANDIDATES = (_SQL / "claim_locking_candidates.sql").read_text()
_TRY_EACH = (_SQL / "claim_try_locks.sql").read_text()
_WRITE = (_SQL / "claim_write.sql").read_text()


def _recount(session_id, candidates: list[_Candidate], offers, limit) -> _Tally:
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
    running = ProcessingJob.objects.filter(state=JobState.RUNNING)
    by_requester = _counted(running.filter(requester_id__in=requesters), "requester")
    by_project = _counted(running.filter(project_id__in=projects), "project")
    by_operation = _counted(_holding_slots(session_id).filter(operation__in=operations), "operation")
    return by_requester.union(by_project, by_operation, all=True)


def _holding_slots(session_id):
    """The session's attempts that hold one of its slots: running, with an unexpired lease."""
    return ProcessingAttempt.objects.filter(
        session_id=session_id, state=AttemptState.RUNNING, lease_expires_at__gt=Now()
    )


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


def _written(session_id, chosen: list[_Candidate], limit, *, admitting: bool, committing: bool = False) -> list[Claim]:
    """Write the claims of ``chosen``. ``admitting`` (one candidate, its locks held, no recount yet): the
    statement itself first checks the candidate against the running limits and the session's slots, with the
    same rules (``within_running_limits``, ``_admitted_query``), and writes nothing if it is over one.
    ``committing``: the transaction's COMMIT is sent with the write, in its round trip."""
    writes = _Writes.of(session_id, chosen, limit)
    if admitting:
        [candidate] = chosen
        admitted, admitted_params = _ADMITTED.named(
            "admitted",
            literals=(_partitions_of([candidate.operation]),),
            job_id=candidate.id,
            operation=candidate.operation,
            session_id=session_id,
            slots=candidate.slots,
        )
        sql, params = _WRITE.replace("{admitted}", admitted), {**writes.params, **admitted_params}
    else:
        sql, params = _WRITE.replace("{admitted}", _ALL_CHOSEN), writes.params
    if committing:
        with prepared_cursor() as cursor, prepared_cursor() as commit:
            with connection.connection.pipeline():
                cursor.execute(sql, params)
                commit.execute("COMMIT")
            attempt_ids = dict(cursor.fetchall())
    else:
        with prepared_cursor() as cursor:
            attempt_ids = dict(cursor.execute(sql, params).fetchall())
    return writes.claims(attempt_ids) if attempt_ids else []


def _admitted_query(partitions, *, job_id, operation, session_id, slots):
    """The job, if its requester and project are within their running limits, its requester within its fair
    share, and the session has a free slot for its operation (its unexpired running attempts of it fewer than
    ``slots``)."""
    session_running = (
        _holding_slots(session_id)
        .filter(operation=OuterRef("operation"))
        .values("operation")
        .annotate(n=Count("*"))
        .values("n")
    )
    return (
        ProcessingJob.objects.filter(id=job_id)
        .within_running_limits(partitions)
        .within_fair_share([operation])
        .annotate(session_running=Coalesce(Subquery(session_running), 0))
        .filter(session_running__lt=slots)
        .values("id")
    )


_ADMITTED = PreparedQuery(_admitted_query)
_ALL_CHOSEN = "SELECT unnest(%(job_ids)s::uuid[]) AS id"


@dataclass(frozen=True)
class _Writes:
    """The attempts, their tickets and the jobs' queued → running moves: claim_write.sql's parameters."""

    chosen: list[_Candidate]
    claim_ids: list[uuid.UUID]
    tickets: list["_Ticket"]
    lease_expires_at: datetime
    ticket_expires_at: datetime
    params: dict

    @classmethod
    def of(cls, session_id, chosen: list[_Candidate], limit) -> "_Writes":
        now = chosen[0].now
        claim_ids = [uuid.uuid4() for _ in chosen]
        tickets = [
            ticket
            for candidate, claim_id in zip(chosen, claim_ids, strict=True)
            for ticket in _tickets(candidate, claim_id)
        ]
        lease_expires_at = now + timedelta(seconds=limit.lease_seconds)
        ticket_expires_at = now + timedelta(seconds=limit.transfer_ticket_seconds)
        params = {
            "session_id": session_id,
            "now": now,
            "lease_expires_at": lease_expires_at,
            "ticket_expires_at": ticket_expires_at,
            "job_ids": [candidate.id for candidate in chosen],
            "numbers": [candidate.attempt_count + 1 for candidate in chosen],
            "operations": [candidate.operation for candidate in chosen],
            "claim_ids": claim_ids,
            "contracts": [candidate.processor_contract for candidate in chosen],
            **{f"ticket_{column}": [getattr(ticket, field) for ticket in tickets] for column, field in _TICKET_COLUMNS},
        }
        return cls(chosen, claim_ids, tickets, lease_expires_at, ticket_expires_at, params)

    def claims(self, attempt_ids: dict[uuid.UUID, int]) -> list[Claim]:
        return [
            _claim(
                candidate,
                attempt_ids[claim_id],
                claim_id,
                self.lease_expires_at,
                [ticket for ticket in self.tickets if ticket.claim_id == claim_id],
                self.ticket_expires_at,
            )
            for candidate, claim_id in zip(self.chosen, self.claim_ids, strict=True)
        ]


@dataclass(frozen=True)
class _Ticket:
    id: uuid.UUID
    claim_id: uuid.UUID
    secret: str
    secret_sha256: str
    kind: str
    role: str
    max_bytes: int
    expected_sha256: str = ""
    expected_size: int | None = None
    blob_id: int | None = None


# claim_write.sql's ticket arrays: ticket_<column> holds each ticket's <field>.
_TICKET_COLUMNS = (
    ("ids", "id"), ("claim_ids", "claim_id"), ("secret_sha256s", "secret_sha256"), ("kinds", "kind"),
    ("roles", "role"), ("max_bytes", "max_bytes"), ("expected_sha256s", "expected_sha256"),
    ("expected_sizes", "expected_size"), ("blob_ids", "blob_id"),
)  # fmt: skip


def _tickets(candidate: _Candidate, claim_id: uuid.UUID) -> list[_Ticket]:
    """The claim's download ticket for its input, then an upload ticket per result role of its operation."""
    download = _Ticket(
        uuid.uuid4(),
        claim_id,
        *ticket_secret_new(),
        TransferKind.DOWNLOAD_INPUT,
        role="",
        max_bytes=candidate.input_size,
        expected_sha256=candidate.input_digest,
        expected_size=candidate.input_size,
        blob_id=candidate.input_blob_id,
    )
    uploads = [
        _Ticket(uuid.uuid4(), claim_id, *ticket_secret_new(), TransferKind.UPLOAD_OUTPUT, role.role, role.max_bytes)
        for role in operation_get(candidate.operation).result_roles
    ]
    return [download, *uploads]


def _claim(candidate: _Candidate, attempt_id, claim_id, lease_expires_at, tickets, expires_at) -> Claim:
    def issued(ticket: _Ticket) -> IssuedTicket:
        return IssuedTicket(ticket.id, ticket.secret, expires_at, ticket.max_bytes)

    download, *uploads = tickets
    return Claim(
        job_id=candidate.id,
        attempt_id=attempt_id,
        attempt_number=candidate.attempt_count + 1,
        claim_id=claim_id,
        operation=candidate.operation,
        processor_contract=candidate.processor_contract,
        lease_expires_at=lease_expires_at,
        input_blob_id=candidate.input_blob_id,
        input_digest=candidate.input_digest,
        options=candidate.options,
        input_profile=candidate.input_profile,
        input_filename=candidate.input_filename,
        project_id=candidate.project_id,
        input_size=candidate.input_size,
        download=issued(download),
        uploads={ticket.role: issued(ticket) for ticket in uploads},
    )
