"""Reapers (docs/architecture.md §9). Each step is idempotent and safe to run from several processes at once.

Steps take work with ``FOR UPDATE SKIP LOCKED`` and then make guarded updates,
so two reapers never both move the same row, a reaper killed mid-sweep leaves
every row either done or untouched, and a worker that completes between a
reaper's read and its update wins (the update no longer matches).
"""

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import connection, transaction

from foundation import chores
from processing.finalization.finalize import finalization_take_over, job_finalize
from processing.kernel.attempt_log import attempt_log
from processing.kernel.blobs import BLOB_GRACE, NOT_REFERENCED_BY_PROCESSING, blob_ids_kept
from processing.kernel.clock import db_now
from processing.kernel.configuration import limits
from processing.kernel.transitions import job_transition
from processing.models import (
    AttemptState,
    FailureClass,
    IdempotencyReservation,
    JobState,
    OperationPause,
    ProcessingAttempt,
    ProcessingBlob,
    ProcessingJob,
    SessionState,
    StagedOutput,
    TransferTicket,
    WorkerRequest,
    WorkerSession,
)
from processing.queue.fair_share import fair_share_yields_request
from processing.queue.retry_policy import job_after_attempt
from processing.submission.submit import preparations_abandoned_fail
from processing.upkeep.alerts import invariants_check_if_due
from processing.upkeep.fleet import drained_sessions_close
from processing.upkeep.metrics import cleanup_failures
from processing.upkeep.rollups import rollups_pass

logger = logging.getLogger(__name__)

BATCH = 200
STAGED_GRACE = timedelta(minutes=10)


@dataclass
class SweepReport:
    counts: dict[str, int] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # the steps that raised (logged, counted in /metrics)

    def add(self, step: str, count: int) -> None:
        self.counts[step] = self.counts.get(step, 0) + count


def sessions_expire() -> int:
    now = db_now()
    return WorkerSession.objects.filter(
        state__in=[SessionState.ACTIVE, SessionState.DRAINING], expires_at__lte=now
    ).update(state=SessionState.EXPIRED)


def leases_expire() -> int:
    """Mark running attempts whose lease passed as lost, and retry, cancel or fail their jobs.

    Lock order is the job row, then the attempt, as for delivery and failure. A job
    whose row is locked (say, by a delivery in progress) is skipped this round: if
    the worker completes meanwhile, completion wins.
    """
    done = 0
    limit = limits()
    skipped: list = []
    while True:
        with transaction.atomic():
            now = db_now()
            job = (
                ProcessingJob.objects.select_for_update(skip_locked=True, of=("self",))
                .filter(
                    state=JobState.RUNNING,
                    attempts__state=AttemptState.RUNNING,
                    attempts__lease_expires_at__lte=now,
                )
                .exclude(pk__in=skipped)
                .order_by("created_at")
                .first()
            )
            if job is None:
                return done + _stray_attempts_lost(now)
            attempt = job.attempts.filter(state=AttemptState.RUNNING).first()
            lost = attempt is not None and ProcessingAttempt.objects.filter(
                pk=attempt.pk, state=AttemptState.RUNNING, lease_expires_at__lte=now
            ).update(state=AttemptState.LOST, ended_at=now)
            if not lost:
                skipped.append(job.pk)
            if lost and job.state == JobState.RUNNING:
                logger.warning("lease lost", extra=attempt_log(attempt))
                job_after_attempt(
                    job,
                    failure_class=FailureClass.WORKER_INTERRUPTED,
                    code="lease_expired",
                    message="The worker stopped renewing its lease.",
                    now=now,
                    limit=limit,
                )
            done += lost


def _stray_attempts_lost(now) -> int:
    """Running attempts of jobs that are no longer running can never deliver: close them."""
    return (
        ProcessingAttempt.objects.filter(state=AttemptState.RUNNING, lease_expires_at__lte=now)
        .exclude(job__state=JobState.RUNNING)
        .update(state=AttemptState.LOST, ended_at=now)
    )


def finalizations_recover() -> int:
    """Finish jobs whose finalizer died: take a fresh token once the old lease expires, then finalize."""
    done = 0
    for job_id in ProcessingJob.objects.filter(
        state=JobState.FINALIZING, finalization_expires_at__lte=db_now()
    ).values_list("pk", flat=True)[:BATCH]:
        token = finalization_take_over(job_id=job_id)
        if token is not None:
            logger.warning("recovering a stuck finalization", extra={"job": str(job_id)})
            job_finalize(job_id=job_id, token=token)
            done += 1
    return done


def deadlines_expire() -> int:
    """Abandoned preparations and queue entries past their deadline become ``expired``."""
    done = 0
    for state in (JobState.PREPARING, JobState.QUEUED):
        while True:
            with transaction.atomic():
                job = (
                    ProcessingJob.objects.select_for_update(skip_locked=True)
                    .filter(state=state, deadline_at__lte=db_now())
                    # A paused operation's queue waits for the operator, not for the deadline (queue/pauses.py).
                    .exclude(state=JobState.QUEUED, operation__in=OperationPause.objects.values("operation"))
                    .first()
                )
                if job is None:
                    break
                done += job_transition(job_id=job.pk, to=JobState.EXPIRED, only_from={state})
    return done


def records_expire() -> int:
    now = db_now()
    count = TransferTicket.objects.filter(expires_at__lte=now).delete()[0]
    count += WorkerRequest.objects.filter(expires_at__lte=now).delete()[0]
    return count + IdempotencyReservation.objects.filter(expires_at__lte=now).delete()[0]


def staged_orphans_delete() -> int:
    """Staged outputs of attempts that ended without delivery are never published, and those of published jobs
    are left over: past the grace period, drop both."""
    ended = [AttemptState.FAILED, AttemptState.LOST, AttemptState.RELEASED, AttemptState.CANCELLED]
    cutoff = db_now() - STAGED_GRACE
    old = StagedOutput.objects.filter(created_at__lte=cutoff)
    return (old.filter(attempt__state__in=ended) | old.published()).delete()[0]


def retention_apply() -> int:
    """Delete terminal jobs past retention (their attempts, artifacts, staged rows go with them)."""
    cutoff = db_now() - timedelta(days=limits().retention_days)
    ids = list(ProcessingJob.objects.terminal().filter(completed_at__lte=cutoff).values_list("pk", flat=True)[:BATCH])
    return ProcessingJob.objects.filter(pk__in=ids).delete()[0] if ids else 0


def outbox_retire() -> int:
    """Dispatched outbox events are kept for the retention period, for audit and replays, then dropped."""
    from processing.models import OutboxEvent

    cutoff = db_now() - timedelta(days=limits().retention_days)
    return OutboxEvent.objects.filter(dispatched_at__lte=cutoff).delete()[0]


def blobs_collect() -> int:
    """Delete blobs nothing references once their grace period has passed since last use.

    Library versions keep their PDF bytes (the Library registers their keeper with
    ``blob_keeper_register``), even after their indexing job is retired; bytes stored
    for an acceptance that was refused or rolled back are referenced by nothing and go
    after the grace period.
    """
    cutoff = db_now() - BLOB_GRACE
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT blob.id FROM processing_processingblob AS blob "  # noqa: S608  a fixed fragment
            f"WHERE blob.touched_at <= %s AND {NOT_REFERENCED_BY_PROCESSING} LIMIT %s",
            [cutoff, BATCH],
        )
        ids = [blob_id for (blob_id,) in cursor.fetchall()]
    # A version names its blob only after touching it (blob_put) within the grace period, so a
    # blob both past the cutoff and unnamed here cannot gain a version before the delete below.
    # Blobs a version holds are touched, so they leave the candidates for another grace period.
    kept = blob_ids_kept(ids)
    if kept:
        ProcessingBlob.objects.filter(pk__in=kept).update(touched_at=db_now())
    ids = sorted(set(ids) - kept)
    if not ids:
        return 0
    with transaction.atomic(), connection.cursor() as cursor:
        # Re-check inside the delete: a new reference or a touch since the read keeps the blob.
        cursor.execute(
            f"DELETE FROM processing_processingblob AS blob "  # noqa: S608  a fixed fragment; values are parameters
            f"WHERE blob.id = ANY(%s) AND blob.touched_at <= %s AND {NOT_REFERENCED_BY_PROCESSING}",
            [ids, cutoff],
        )
        return cursor.rowcount


def rollup_buckets_write() -> int:
    """Every pass writes the buckets that have just ended; the count is of those caught up after the loop was
    down, so that a quiet loop prints nothing."""
    return rollups_pass().caught_up


STEPS = [
    ("sessions_expired", sessions_expire),
    ("drained_sessions_closed", drained_sessions_close),
    ("leases_lost", leases_expire),
    ("fair_share_yields_requested", fair_share_yields_request),
    ("finalizations_recovered", finalizations_recover),
    ("preparations_abandoned", preparations_abandoned_fail),
    ("deadlines_expired", deadlines_expire),
    ("records_expired", records_expire),
    ("staged_orphans_deleted", staged_orphans_delete),
    ("jobs_retired", retention_apply),
    ("outbox_events_retired", outbox_retire),
    ("blobs_collected", blobs_collect),
    ("rollup_buckets_caught_up", rollup_buckets_write),
]


def sweep() -> SweepReport:
    """Run every reaper once, then the invariant checker when it is due, then every context's registered chore
    (``foundation.chores``). A failing step is logged and counted; the others still run."""
    report = SweepReport()
    for name, step in STEPS:
        _step_run(report, name, lambda step=step, name=name: {name: step()}, prefix="")
    _step_run(report, "invariants", lambda: {"invariant_violations_found": invariants_check_if_due()}, prefix="")
    for name, chore in chores.chores_registered():
        _step_run(report, name, chore, prefix=f"{name}_")
    return report


def _step_run(report: SweepReport, name: str, step, *, prefix: str) -> None:
    try:
        for counted, count in step().items():
            report.add(f"{prefix}{counted}", count)
    except Exception:
        logger.exception("reaper step failed", extra={"step": name})
        cleanup_failures.labels(step=name).inc()
        report.failed.append(name)
