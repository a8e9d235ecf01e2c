"""Claiming work (architecture §7): one short transaction per claim, database time for the lease.

Capacity is never stored: the agent offers its locally free permits, and in the
transaction that creates the attempt Core intersects the offer with the
session's registered slot ceiling minus its unexpired running claims.
Selection is FIFO by creation among claimable jobs of the offered operations,
``FOR UPDATE SKIP LOCKED``, skipping jobs whose requester or project already
holds its running limit (made exact by transaction-scoped advisory locks).
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction

from processing.admission import advisory_key
from processing.configuration import Limits, limits
from processing.models import (
    AttemptState,
    JobState,
    Phase,
    ProcessingAttempt,
    ProcessingJob,
    SessionState,
    WorkerProcessor,
    WorkerSession,
)
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


def db_now() -> datetime:
    """The transaction's ``now()``: the authority for every lease decision."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]


def free_capacity(session: WorkerSession, offers: dict[str, int], now: datetime) -> dict[str, WorkerProcessor]:
    """Offered operations that still have a free registered slot, with their processor.

    The processor rows are locked so that concurrent claims of one session
    count each other's committed attempts instead of both taking the last slot.
    """
    offered = session.processors.select_for_update().filter(operation__in=list(offers), healthy=True)
    processors = {p.operation: p for p in offered.order_by("operation")}
    free = {}
    for operation, processor in processors.items():
        running = ProcessingAttempt.objects.filter(
            session=session, operation=operation, state=AttemptState.RUNNING, lease_expires_at__gt=now
        ).count()
        if min(offers[operation], processor.slots - running) > 0:
            free[operation] = processor
    return free


_CANDIDATES_SQL = """
    SELECT id FROM processing_processingjob AS job
    WHERE job.state = 'queued' AND job.operation = ANY(%(operations)s)
      AND (job.next_attempt_at IS NULL OR job.next_attempt_at <= %(now)s)
      AND NOT (job.id = ANY(%(excluded)s))
      AND (SELECT count(*) FROM processing_processingjob AS busy
           WHERE busy.state = 'running' AND busy.requester_id = job.requester_id) < %(per_requester)s
      AND (job.project_id IS NULL OR
           (SELECT count(*) FROM processing_processingjob AS busy
            WHERE busy.state = 'running' AND busy.project_id = job.project_id) < %(per_project)s)
    ORDER BY job.created_at, job.id
    LIMIT 1
    FOR UPDATE OF job SKIP LOCKED
"""


def _running_limit_reached(job: ProcessingJob, limit: Limits) -> bool:
    """Recount under advisory locks so concurrent claimers cannot both take a requester's last slot."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [advisory_key("running-requester", job.requester_id)])
        if job.project_id is not None:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [advisory_key("running-project", job.project_id)])
    running = ProcessingJob.objects.filter(state=JobState.RUNNING)
    if running.filter(requester_id=job.requester_id).count() >= limit.running_jobs_per_requester:
        return True
    return job.project_id is not None and running.filter(project_id=job.project_id).count() >= (
        limit.running_jobs_per_project
    )


def _next_job(operations: list[str], now: datetime, limit: Limits) -> ProcessingJob | None:
    """Lock one candidate at a time, so other claimers can take the rest meanwhile."""
    excluded: list[uuid.UUID] = []
    for _ in range(CANDIDATE_TRIES):
        with connection.cursor() as cursor:
            cursor.execute(
                _CANDIDATES_SQL,
                {
                    "operations": operations, "now": now, "excluded": excluded,
                    "per_requester": limit.running_jobs_per_requester,
                    "per_project": limit.running_jobs_per_project,
                },
            )  # fmt: skip
            row = cursor.fetchone()
        if row is None:
            return None
        job = ProcessingJob.objects.get(pk=row[0])
        if not _running_limit_reached(job, limit):
            return job
        excluded.append(job.pk)
    return None


def claim_acquire(*, session_id: uuid.UUID, offers: dict[str, int]) -> Claim | None:
    """Create the next attempt for this session, or return None when nothing fits its offer."""
    limit = limits()
    with transaction.atomic():
        now = db_now()
        session = WorkerSession.objects.filter(pk=session_id, state=SessionState.ACTIVE, expires_at__gt=now).first()
        if session is None:
            return None
        capacity = free_capacity(session, {op: n for op, n in offers.items() if n > 0}, now)
        if not capacity:
            return None
        job = _next_job(sorted(capacity), now, limit)
        if job is None:
            return None
        processor = capacity[job.operation]
        attempt = ProcessingAttempt.objects.create(
            job=job,
            number=job.attempt_count + 1,
            operation=job.operation,
            session=session,
            processor_contract=processor.processor_contract,
            lease_expires_at=now + timedelta(seconds=limit.lease_seconds),
            started_at=now,
        )
        job_transition(
            job_id=job.pk,
            to=JobState.RUNNING,
            only_from={JobState.QUEUED},
            phase=Phase.PROCESSING,
            attempt_count=job.attempt_count + 1,
            started_at=job.started_at or now,
            next_attempt_at=None,
        )
        return Claim(
            job_id=job.pk, attempt_id=attempt.pk, attempt_number=attempt.number, claim_id=attempt.claim_id,
            operation=job.operation, processor_contract=processor.processor_contract,
            lease_expires_at=attempt.lease_expires_at, input_blob_id=job.input_blob_id,
            input_digest=job.input_digest,
            options=job.options, input_profile=job.input_profile, input_filename=job.input_filename,
            project_id=job.project_id,
        )  # fmt: skip
