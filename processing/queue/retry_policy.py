"""Core-owned retry policy (docs/architecture.md §9): workers classify, Core decides.

``transient_infrastructure`` retries with bounded exponential backoff and
jitter; ``worker_interrupted`` (and a lost lease) retries at once, the lease
having already expired; every other class is terminal. Attempts that failed or
were lost count against ``max_attempts``; a released attempt does not. A retry
never reopens a terminal job: every move is a guarded transition.
"""

import random
from datetime import datetime, timedelta

from processing.kernel.configuration import Limits
from processing.kernel.transitions import failure_fields, job_transition
from processing.models import AttemptState, FailureClass, JobState, Phase, ProcessingJob

RETRYABLE = {FailureClass.TRANSIENT_INFRASTRUCTURE, FailureClass.WORKER_INTERRUPTED}


def backoff_seconds(consumed_attempts: int, limit: Limits, *, rng: random.Random | None = None) -> float:
    """Exponential in the attempts used so far, capped, with full jitter in its upper half."""
    ceiling = min(limit.retry_backoff_max_seconds, limit.retry_backoff_seconds * 2 ** max(consumed_attempts - 1, 0))
    return ceiling / 2 + (rng or random).random() * ceiling / 2


def consumed_attempts(job: ProcessingJob) -> int:
    return job.attempts.filter(state__in=[AttemptState.FAILED, AttemptState.LOST]).count()


def job_after_attempt(job: ProcessingJob, *, failure_class: str, code: str, message: str, now: datetime, limit: Limits):
    """Inside the caller's transaction (job row locked): requeue, cancel or fail after a bad attempt."""
    if job.cancellation_requested:
        job_transition(job_id=job.pk, to=JobState.CANCELLED, only_from={JobState.RUNNING})
        return
    used = consumed_attempts(job)
    if failure_class in RETRYABLE and used < job.max_attempts:
        delay = backoff_seconds(used, limit) if failure_class == FailureClass.TRANSIENT_INFRASTRUCTURE else 0
        job_transition(
            job_id=job.pk,
            to=JobState.QUEUED,
            only_from={JobState.RUNNING},
            phase=Phase.WAITING_FOR_WORKER,
            next_attempt_at=now + timedelta(seconds=delay) if delay else None,
            deadline_at=now + timedelta(seconds=limit.queue_wait_seconds),
        )
        from processing.kernel.notify import queue_notify

        queue_notify(job.operation)
        return
    if failure_class in RETRYABLE:
        code, message = "attempts_exhausted", f"Gave up after {used} attempts. Last: {message}"
    job_transition(
        job_id=job.pk,
        to=JobState.FAILED,
        only_from={JobState.RUNNING},
        **failure_fields(failure_class, code, message),
    )
