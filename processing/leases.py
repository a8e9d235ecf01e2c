"""Claim fencing: every claim-scoped call compares its claim with the current unexpired one in the database.

Renewals are guarded UPDATEs; zero rows means the claim is lost and nothing is
written. Database ``now()`` decides expiry, never the caller's clock.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction

from processing.claims import db_now
from processing.configuration import limits
from processing.exceptions import ClaimLost
from processing.models import AttemptState, JobState, Phase, ProcessingAttempt, ProcessingJob


@dataclass(frozen=True)
class LeaseStatus:
    lease_expires_at: datetime
    cancellation_requested: bool


def attempt_current(claim_id: uuid.UUID, *, now: datetime, lock_job: bool = False) -> ProcessingAttempt:
    """The running attempt holding ``claim_id`` with an unexpired lease on a running job, or ClaimLost.

    With ``lock_job`` the job row is locked first, which serializes this call
    with cancellation and with the reapers; the attempt is read again under
    that lock, since a release or a reaper may have ended it (and another
    claim started the job again) while this call waited.
    """
    attempt = ProcessingAttempt.objects.filter(claim_id=claim_id).select_related("job").first()
    if attempt is None:
        raise ClaimLost()
    job = attempt.job
    if lock_job:
        job = ProcessingJob.objects.select_for_update().get(pk=attempt.job_id)
        attempt = ProcessingAttempt.objects.select_for_update().get(pk=attempt.pk)
        attempt.job = job
    if attempt.state != AttemptState.RUNNING or attempt.lease_expires_at <= now or job.state != JobState.RUNNING:
        raise ClaimLost()
    return attempt


def lease_renew(*, claim_id: uuid.UUID, phase: str | None = None) -> LeaseStatus:
    """Heartbeat of a claim: extend the lease, record the phase, report a cancellation request."""
    with transaction.atomic():
        now = db_now()
        # Lock the job first (the order delivery and the reapers use), then touch the attempt.
        attempt = attempt_current(claim_id, now=now, lock_job=True)
        expires = now + timedelta(seconds=limits().lease_seconds)
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
        return LeaseStatus(lease_expires_at=expires, cancellation_requested=cancellation)
