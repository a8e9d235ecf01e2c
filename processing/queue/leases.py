"""Claim fencing: every claim-scoped call compares its claim with the current unexpired one in the database.

Renewals are guarded UPDATEs; zero rows means the claim is lost and nothing is
written. Database ``now()`` decides expiry, never the caller's clock. The agent
stops a processor at the wall time it was given; Core enforces it too: a claim
that heartbeats past its wall time plus one lease of grace is failed
``resource_limit`` (``wall_time_exceeded``) instead of renewed.
"""

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Subquery

from processing.exceptions import ClaimLost
from processing.kernel.attempt_log import attempt_log
from processing.kernel.clock import TRANSACTION_NOW
from processing.kernel.configuration import limits
from processing.models import AttemptState, FailureClass, JobState, Phase, ProcessingAttempt, ProcessingJob
from processing.queue.retry_policy import job_after_attempt

logger = logging.getLogger(__name__)

# attempt_current's rule for hand-written statements that join the claim's attempt AS attempt and its job
# AS job, judged by database time in the statement itself.
CLAIM_CURRENT_SQL = "attempt.state = 'running' AND job.state = 'running' AND attempt.lease_expires_at > now()"


@dataclass(frozen=True)
class LeaseStatus:
    lease_expires_at: datetime
    cancellation_requested: bool


def attempt_current(claim_id: uuid.UUID, *, lock_job: bool = False) -> tuple[ProcessingAttempt, datetime]:
    """The running attempt holding ``claim_id`` with an unexpired lease on a running job, and the database
    time it was judged at; ClaimLost otherwise.

    With ``lock_job`` the job row is locked first, which serializes this call
    with cancellation and with the reapers; the attempt is read under that lock
    (a later statement), since a release or a reaper may have ended it (and
    another claim started the job again) while this call waited.
    """
    attempts = ProcessingAttempt.objects.annotate(db_now=TRANSACTION_NOW).filter(claim_id=claim_id)
    if lock_job:
        job_of_claim = ProcessingAttempt.objects.filter(claim_id=claim_id).values("job_id")[:1]
        job = ProcessingJob.objects.select_for_update().filter(pk=Subquery(job_of_claim)).first()
        attempt = attempts.select_for_update().first() if job is not None else None
        if attempt is not None:
            attempt.job = job
    else:
        attempt = attempts.select_related("job").first()
    if attempt is None:
        raise ClaimLost()
    now = attempt.db_now
    running = attempt.state == AttemptState.RUNNING and attempt.job.state == JobState.RUNNING
    if not running or attempt.lease_expires_at <= now:
        raise ClaimLost()
    return attempt, now


def attempt_end(attempt: ProcessingAttempt, state: str, now, **fields) -> None:
    """End the running attempt (its job locked by the caller); ClaimLost if it is no longer running."""
    ended = ProcessingAttempt.objects.filter(pk=attempt.pk, state=AttemptState.RUNNING).update(
        state=state, ended_at=now, **fields
    )
    if not ended:
        raise ClaimLost()


def lease_renew(*, claim_id: uuid.UUID, phase: str | None = None) -> LeaseStatus:
    """Heartbeat of a claim: extend the lease, record the phase, report a cancellation request; or, past the
    wall time, fail the attempt and answer ClaimLost, which stops the agent's processor."""
    limit = limits()
    with transaction.atomic(durable=True):
        # Lock the job first (the order delivery and the reapers use), then touch the attempt.
        attempt, now = attempt_current(claim_id, lock_job=True)
        if now - attempt.started_at > timedelta(seconds=limit.wall_seconds + limit.lease_seconds):
            _fail_over_wall_time(attempt, now, limit)
            status = None  # the failure commits; ClaimLost is raised outside the transaction
        else:
            status = _renewed(attempt, claim_id, phase, now, limit)
    if status is None:
        raise ClaimLost("The attempt ran past its wall time: Core failed it.", details={"code": WALL_TIME_EXCEEDED})
    return status


def _renewed(attempt: ProcessingAttempt, claim_id: uuid.UUID, phase: str | None, now, limit) -> LeaseStatus:
    expires = now + timedelta(seconds=limit.lease_seconds)
    updates = {"lease_expires_at": expires}
    if phase in (Phase.PROCESSING, Phase.UPLOADING_RESULT):
        updates["phase"] = phase
    renewed = ProcessingAttempt.objects.filter(
        pk=attempt.pk, claim_id=claim_id, state=AttemptState.RUNNING, lease_expires_at__gt=now
    ).update(**updates)
    if not renewed:
        raise ClaimLost()
    if "phase" in updates:
        ProcessingJob.objects.filter(pk=attempt.job_id, state=JobState.RUNNING).update(phase=phase)
    cancellation = ProcessingJob.objects.values_list("cancellation_requested", flat=True).get(pk=attempt.job_id)
    # A request to give the slot back (queue/fair_share.py) stops the processor as a cancellation does.
    yielding = attempt.yield_requested_at is not None
    return LeaseStatus(lease_expires_at=expires, cancellation_requested=cancellation or yielding)


WALL_TIME_EXCEEDED = "wall_time_exceeded"


def _fail_over_wall_time(attempt: ProcessingAttempt, now, limit) -> None:
    message = f"The attempt ran longer than its wall time of {limit.wall_seconds} s."
    attempt_failed(attempt, now, failure_class=FailureClass.RESOURCE_LIMIT, code=WALL_TIME_EXCEEDED, message=message)


def attempt_failed(attempt: ProcessingAttempt, now, *, failure_class: str, code: str, message: str) -> None:
    """Inside the caller's transaction (job locked): end the attempt with its failure (cancelled, if a
    cancellation was requested meanwhile) and apply the retry policy to its job."""
    ended = AttemptState.CANCELLED if attempt.job.cancellation_requested else AttemptState.FAILED
    logger.info("attempt failed", extra={**attempt_log(attempt), "failure_class": failure_class, "code": code})
    attempt_end(
        attempt, ended, now, failure_class=failure_class, failure_code=code[:64], failure_message=message[:2000]
    )
    job_after_attempt(attempt.job, failure_class=failure_class, code=code, message=message, now=now, limit=limits())
