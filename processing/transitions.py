"""The one service that changes a job's state: a guarded UPDATE against the allowed transitions.

Nothing else assigns ``ProcessingJob.state``. A transition into a terminal
state also inserts the job's ``TerminalCommit`` row (the database allows one)
and its outbox event, in the same transaction.
"""

import uuid

from django.db import transaction
from django.utils import timezone

from processing.models import JobState, Phase, ProcessingJob, TerminalCommit
from processing.models.jobs import TERMINAL_STATES
from processing.outbox import outbox_emit

ALLOWED: dict[str, frozenset[str]] = {
    JobState.PREPARING: frozenset(
        {JobState.QUEUED, JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.EXPIRED}
    ),
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.CANCELLED, JobState.EXPIRED, JobState.FAILED}),
    JobState.RUNNING: frozenset({JobState.QUEUED, JobState.FINALIZING, JobState.FAILED, JobState.CANCELLED}),
    JobState.FINALIZING: frozenset({JobState.SUCCEEDED, JobState.FAILED}),
}

EVENT_KINDS = {
    JobState.SUCCEEDED: "processing.job.succeeded",
    JobState.FAILED: "processing.job.failed",
    JobState.CANCELLED: "processing.job.cancelled",
}


def job_transition(*, job_id: uuid.UUID, to: str, only_from: frozenset[str] | set[str] | None = None, **fields) -> bool:
    """Move the job to ``to`` if its state allows it (and is in ``only_from``); return whether it moved."""
    sources = {state for state, targets in ALLOWED.items() if to in targets}
    if only_from is not None:
        sources &= set(only_from)
    if not sources:
        raise ValueError(f"no allowed transition into {to!r} from {only_from!r}")
    updates = {"state": to, **fields}
    now = timezone.now()
    if to in TERMINAL_STATES:
        updates.update(completed_at=now, phase=Phase.COMPLETE, finalization_token=None, finalization_expires_at=None)
    with transaction.atomic(savepoint=False):  # part of the caller's transaction, no savepoint round trips
        moved = ProcessingJob.objects.filter(pk=job_id, state__in=sources).update(**updates)
        if moved and to in TERMINAL_STATES:
            TerminalCommit.objects.create(job_id=job_id, state=to, committed_at=now)
            if to in EVENT_KINDS:
                outbox_emit(kind=EVENT_KINDS[to], payload={"job_id": str(job_id)})
    return moved == 1


def failure_fields(failure_class: str, code: str, message: str) -> dict:
    return {"failure_class": failure_class, "failure_code": code[:64], "failure_message": message[:2000]}
