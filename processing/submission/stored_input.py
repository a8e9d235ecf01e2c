"""Submitting a job whose input another context already stored as a blob, inside that context's transaction.

The Library accepts a PDF version in one transaction that also holds the
submission identity, the job and the outbox event (seed 002). Its input is
durable before that transaction begins, so there is nothing to capture: the
job is inserted directly in ``queued`` after admission, and the NOTIFY that
wakes idle workers is delivered only if the caller commits.
"""

import hashlib
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from processing.kernel.bundles import canonical_json
from processing.kernel.configuration import limits
from processing.kernel.notify import queue_notify
from processing.models import IdempotencyReservation, JobState, Phase, ProcessingJob
from processing.submission.admission import admission_check
from processing.submission.idempotency import Scope, reservation_insert, reservation_resolve


@dataclass(frozen=True)
class StoredInput:
    """What the job processes: a blob the caller stored (``blob_put``) before its transaction."""

    blob_id: int
    sha256: str
    filename: str


def stored_input_reserve(*, scope: Scope) -> IdempotencyReservation | None:
    """Inside the caller's transaction: claim the submission identity, or None when another request holds it."""
    return reservation_insert(scope, hours=limits().idempotency_hours)


def stored_input_job_queue(
    *,
    reservation: IdempotencyReservation,
    job_id: uuid.UUID,
    operation: str,
    requester_id: int,
    project_id: uuid.UUID,
    stored: StoredInput,
) -> uuid.UUID:
    """Inside the caller's transaction: admission (429/503 roll the caller back), then the job in ``queued``,
    bound to the reserved identity. Returns the job's id."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("a stored-input job is queued inside its caller's transaction")
    limit = limits()
    admission_check(requester_id=requester_id, project_id=project_id, limits=limit, operation=operation)
    now = timezone.now()
    job = ProcessingJob.objects.create(
        id=job_id, operation=operation, requester_id=requester_id, project_id=project_id,
        state=JobState.QUEUED, phase=Phase.WAITING_FOR_WORKER, options={},
        options_digest=hashlib.sha256(canonical_json({})).hexdigest(), input_filename=stored.filename,
        input_blob_id=stored.blob_id, input_digest=stored.sha256, max_attempts=limit.max_attempts,
        queued_at=now, deadline_at=now + timedelta(seconds=limit.queue_wait_seconds),
    )  # fmt: skip
    queue_notify(operation)
    reservation.job = job
    reservation.save(update_fields=["job"])
    return job.pk


def stored_input_resolve(*, scope: Scope) -> uuid.UUID:
    """In a fresh transaction: the job the identity already names (IdempotencyKeyReused for another command)."""
    return reservation_resolve(scope).pk
