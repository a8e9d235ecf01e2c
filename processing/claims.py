"""Claiming work (architecture §7): one short transaction per claim, database time for the lease.

Capacity is never stored: the agent offers its locally free permits, and in the
transaction that creates the attempt Core intersects the offer with the
session's registered slot ceiling minus its unexpired running claims.
Selection is FIFO by creation among claimable jobs of the offered operations,
``FOR UPDATE SKIP LOCKED``, skipping jobs whose requester or project already
holds its running limit (made exact by transaction-scoped advisory locks).
A claim costs a handful of round trips: capacity, candidate, limit recheck,
attempt insert, job update, commit.
"""

import dataclasses
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction

from processing.admission import advisory_key
from processing.configuration import Limits, limits
from processing.models import JobState, Phase, ProcessingAttempt, TransferKind
from processing.transfers import IssuedTicket, ticket_issue
from processing.transitions import job_transition

CANDIDATE_TRIES = 8


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


@dataclass(frozen=True)
class _Candidate:
    job_id: uuid.UUID
    operation: str
    requester_id: int
    project_id: uuid.UUID | None
    attempt_count: int
    started_at: datetime | None
    input_blob_id: int
    input_digest: str
    options: dict
    input_profile: str
    input_filename: str
    input_size: int


def db_now() -> datetime:
    """The transaction's ``now()``: the authority for every lease decision."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]


# The database time and the offered processors of a live active session, locked: concurrent claims
# of one session queue here, and the count that follows (a new statement, so a fresh snapshot) sees
# the attempts the others committed instead of both taking the last slot.
_PROCESSORS_SQL = """
    SELECT now(), processor.operation, processor.processor_contract, processor.slots
    FROM processing_workerprocessor AS processor
    JOIN processing_workersession AS session ON session.id = processor.session_id
    WHERE processor.session_id = %(session)s AND processor.operation = ANY(%(operations)s) AND processor.healthy
      AND session.state = 'active' AND session.expires_at > now()
    ORDER BY processor.operation
    FOR UPDATE OF processor
"""
_RUNNING_SQL = """
    SELECT operation, count(*) FROM processing_processingattempt
    WHERE session_id = %(session)s AND state = 'running' AND lease_expires_at > now()
    GROUP BY operation
"""


def free_capacity(session_id: uuid.UUID, offers: dict[str, int]) -> tuple[datetime | None, dict[str, str]]:
    """Database time and the offered operations with a free registered slot → their processor contract."""
    with connection.cursor() as cursor:
        cursor.execute(_PROCESSORS_SQL, {"session": session_id, "operations": list(offers)})
        processors = cursor.fetchall()
        if not processors:
            return None, {}
        cursor.execute(_RUNNING_SQL, {"session": session_id})
        running = dict(cursor.fetchall())
    return processors[0][0], {
        operation: contract
        for _, operation, contract, slots in processors
        if min(offers[operation], slots - running.get(operation, 0)) > 0
    }


# Saturated requesters and projects are computed once (from the small set of running jobs), so the
# queue itself is walked in creation order on its partial index and stops at the first unlocked row.
_CANDIDATES_SQL = """
    WITH busy_requesters AS (
        SELECT requester_id FROM processing_processingjob WHERE state = 'running'
        GROUP BY requester_id HAVING count(*) >= %(per_requester)s
    ), busy_projects AS (
        SELECT project_id FROM processing_processingjob WHERE state = 'running' AND project_id IS NOT NULL
        GROUP BY project_id HAVING count(*) >= %(per_project)s
    )
    SELECT job.id, job.operation, job.requester_id, job.project_id, job.attempt_count, job.started_at,
           job.input_blob_id, job.input_digest, job.options, job.input_profile, job.input_filename,
           (SELECT size_bytes FROM processing_processingblob WHERE id = job.input_blob_id)
    FROM processing_processingjob AS job
    WHERE job.state = 'queued' AND job.operation = ANY(%(operations)s)
      AND (job.next_attempt_at IS NULL OR job.next_attempt_at <= %(now)s)
      AND job.id <> ALL(%(excluded)s)
      AND job.requester_id NOT IN (SELECT requester_id FROM busy_requesters)
      AND (job.project_id IS NULL OR job.project_id NOT IN (SELECT project_id FROM busy_projects))
    ORDER BY job.created_at
    LIMIT 1
    FOR UPDATE OF job SKIP LOCKED
"""

# Serialize claimers of the same requester and project, then recount what is running now. The count
# must be a later statement than the lock: a statement's snapshot is taken before it waits.
_LOCK_SQL = "SELECT pg_advisory_xact_lock(%(requester_key)s), pg_advisory_xact_lock(%(project_key)s)"
_RECOUNT_SQL = """
    SELECT (SELECT count(*) FROM processing_processingjob WHERE state = 'running' AND requester_id = %(requester)s),
           (SELECT count(*) FROM processing_processingjob WHERE state = 'running' AND project_id = %(project)s)
"""


def _running_limit_reached(candidate: _Candidate, limit: Limits) -> bool:
    project_key = advisory_key("running-project", candidate.project_id) if candidate.project_id else 0
    with connection.cursor() as cursor:
        keys = {"requester_key": advisory_key("running-requester", candidate.requester_id), "project_key": project_key}
        cursor.execute(_LOCK_SQL, keys)
        cursor.execute(_RECOUNT_SQL, {"requester": candidate.requester_id, "project": candidate.project_id})
        by_requester, by_project = cursor.fetchone()
    return by_requester >= limit.running_jobs_per_requester or (
        candidate.project_id is not None and by_project >= limit.running_jobs_per_project
    )


def _next_candidate(operations: list[str], now: datetime, limit: Limits) -> _Candidate | None:
    """Lock one candidate at a time, so other claimers can take the rest meanwhile."""
    excluded: list[uuid.UUID] = []
    for _ in range(CANDIDATE_TRIES):
        with connection.cursor() as cursor:
            cursor.execute(
                _CANDIDATES_SQL,
                {
                    "operations": operations,
                    "now": now,
                    "excluded": excluded,
                    "per_requester": limit.running_jobs_per_requester,
                    "per_project": limit.running_jobs_per_project,
                },
            )
            row = cursor.fetchone()
        if row is None:
            return None
        candidate = _Candidate(*row)
        if isinstance(candidate.options, str):  # a raw cursor hands jsonb back as text
            candidate = dataclasses.replace(candidate, options=json.loads(candidate.options))
        if not _running_limit_reached(candidate, limit):
            return candidate
        excluded.append(candidate.job_id)
    return None


def claim_acquire(*, session_id: uuid.UUID, offers: dict[str, int]) -> Claim | None:
    """Create the next attempt for this session, or return None when nothing fits its offer."""
    limit = limits()
    offers = {operation: permits for operation, permits in offers.items() if permits > 0}
    if not offers:
        return None
    with transaction.atomic():
        now, contracts = free_capacity(session_id, offers)
        if not contracts:
            return None
        candidate = _next_candidate(sorted(contracts), now, limit)
        if candidate is None:
            return None
        attempt = ProcessingAttempt.objects.create(
            job_id=candidate.job_id,
            number=candidate.attempt_count + 1,
            operation=candidate.operation,
            session_id=session_id,
            processor_contract=contracts[candidate.operation],
            lease_expires_at=now + timedelta(seconds=limit.lease_seconds),
            started_at=now,
        )
        download = ticket_issue(
            attempt_id=attempt.pk, now=now, kind=TransferKind.DOWNLOAD_INPUT, blob_id=candidate.input_blob_id,
            max_bytes=candidate.input_size, expected_sha256=candidate.input_digest,
            expected_size=candidate.input_size,
        )  # fmt: skip
        job_transition(
            job_id=candidate.job_id,
            to=JobState.RUNNING,
            only_from={JobState.QUEUED},
            phase=Phase.PROCESSING,
            attempt_count=candidate.attempt_count + 1,
            started_at=candidate.started_at or now,
            next_attempt_at=None,
        )
        return Claim(
            job_id=candidate.job_id, attempt_id=attempt.pk, attempt_number=attempt.number, claim_id=attempt.claim_id,
            operation=candidate.operation, processor_contract=attempt.processor_contract,
            lease_expires_at=attempt.lease_expires_at, input_blob_id=candidate.input_blob_id,
            input_digest=candidate.input_digest, options=candidate.options, input_profile=candidate.input_profile,
            input_filename=candidate.input_filename, project_id=candidate.project_id,
            input_size=candidate.input_size, download=download,
        )  # fmt: skip
