"""The promises of document processing, checked against the database (``manage.py processing_check``).

Each check returns violations, never raises for a broken promise; an operator
or a test reads them all. ``slack`` lets a check ignore work that is merely
late by less than one reaper interval.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection
from django.db.models import Count, F, Q

from processing.kernel.blobs import BLOB_GRACE, NOT_REFERENCED_BY_PROCESSING, blob_ids_kept
from processing.kernel.clock import db_now
from processing.models import (
    AttemptState,
    JobState,
    OutboxEvent,
    ProcessingArtifact,
    ProcessingAttempt,
    ProcessingJob,
    TerminalCommit,
)
from processing.models.jobs import TERMINAL_STATES

OUTBOX_RETRY_BUDGET = 20
OUTBOX_MAX_PENDING = timedelta(minutes=10)


@dataclass(frozen=True)
class Violation:
    check: str
    detail: str

    def __str__(self) -> str:
        return f"{self.check}: {self.detail}"


# Promises of contexts above Processing (the Library's hand-off to indexing), registered when their app is ready.
_CHECKS: list[Callable[[], list[Violation]]] = []


def invariant_register(check: Callable[[], list[Violation]]) -> None:
    """Add ``check`` to ``check_all``: it returns the violations it finds and never raises for a broken promise."""
    if check not in _CHECKS:
        _CHECKS.append(check)


def _rows(sql: str, params: list) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def jobs_past_deadlines(slack: timedelta) -> list[Violation]:
    """No job stays nonterminal past its deadlines once the reapers have run."""
    cutoff = db_now() - slack
    late = ProcessingJob.objects.filter(
        Q(state__in=[JobState.PREPARING, JobState.QUEUED], deadline_at__lt=cutoff)
        | Q(state=JobState.FINALIZING, finalization_expires_at__lt=cutoff)
        | Q(state=JobState.RUNNING) & ~Q(attempts__state=AttemptState.RUNNING, attempts__lease_expires_at__gte=cutoff)
    ).distinct()
    return [Violation("job_past_deadline", f"{job.pk} is {job.state} past its deadline") for job in late[:100]]


def terminal_commits_match() -> list[Violation]:
    """A job is terminal exactly when it has its one terminal commit, in the same state."""
    mismatched = ProcessingJob.objects.filter(
        Q(state__in=TERMINAL_STATES, terminal__isnull=True) | Q(terminal__isnull=False) & ~Q(state=F("terminal__state"))
    )
    orphans = TerminalCommit.objects.exclude(job__state__in=TERMINAL_STATES)
    return [Violation("terminal_commit", f"{job.pk} ({job.state})") for job in mismatched[:100]] + [
        Violation("terminal_commit", f"{commit.job_id} committed {commit.state} but is not terminal")
        for commit in orphans
    ]


def one_delivery_per_success() -> list[Violation]:
    """A succeeded job that ran has exactly one delivered attempt; every artifact comes from it."""
    found = []
    ran = ProcessingJob.objects.filter(state=JobState.SUCCEEDED, cache_hit=False).annotate(
        delivered=Count("attempts", filter=Q(attempts__state=AttemptState.DELIVERED))
    )
    found += [Violation("delivery_count", f"{job.pk} has {job.delivered}") for job in ran.exclude(delivered=1)[:100]]
    stray = ProcessingArtifact.objects.filter(job__cache_hit=False).exclude(
        source_attempt__state=AttemptState.DELIVERED
    )
    found += [Violation("artifact_source", f"{a.job_id}:{a.role} not from the delivered attempt") for a in stray[:100]]
    return found


def artifacts_from_current_claims() -> list[Violation]:
    """No artifact came from an attempt whose claim had expired when it delivered."""
    late = ProcessingAttempt.objects.filter(state=AttemptState.DELIVERED, ended_at__gt=F("lease_expires_at"))
    published = late.filter(published__isnull=False).distinct()
    return [Violation("expired_claim_published", f"attempt {a.pk} of {a.job_id}") for a in published[:100]]


def artifact_bytes_intact() -> list[Violation]:
    """Every artifact's blob exists and matches its recorded size and digest (checked in the database)."""
    rows = _rows(
        """
        SELECT a.id, a.job_id, a.role, b.id IS NULL FROM processing_processingartifact AS a
        LEFT JOIN processing_processingblob AS b ON b.id = a.blob_id
        WHERE b.id IS NULL OR length(b.data) <> a.size_bytes OR encode(sha256(b.data), 'hex') <> a.sha256
        LIMIT 100
        """,
        [],
    )
    return [
        Violation("artifact_blob_missing", f"{job_id}:{role}")
        if missing
        else Violation("artifact_digest", f"{job_id}:{role} ({artifact_id})")
        for artifact_id, job_id, role, missing in rows
    ]


def unreferenced_blobs(slack: timedelta) -> list[Violation]:
    """No blob outlives its last reference (a job, artifact, staged output, ticket, or a registered keeper's)."""
    rows = _rows(
        f"SELECT blob.id FROM processing_processingblob AS blob "  # noqa: S608  a fixed fragment
        f"WHERE blob.touched_at < now() - %s AND {NOT_REFERENCED_BY_PROCESSING} LIMIT 1000",
        [BLOB_GRACE + slack],
    )
    candidates = [blob_id for (blob_id,) in rows]
    kept = blob_ids_kept(candidates)
    return [Violation("blob_unreferenced", f"blob {blob_id}") for blob_id in candidates if blob_id not in kept][:100]


def outbox_not_stuck() -> list[Violation]:
    """No outbox event is stuck past its retry budget or pending for too long."""
    stuck = OutboxEvent.objects.filter(dispatched_at__isnull=True).filter(
        Q(attempts__gte=OUTBOX_RETRY_BUDGET) | Q(created_at__lt=db_now() - OUTBOX_MAX_PENDING)
    )
    return [Violation("outbox_stuck", f"{e.kind} {e.event_id} after {e.attempts} attempts") for e in stuck[:100]]


def check_all(*, slack: timedelta = timedelta(seconds=60), include_outbox: bool = True) -> list[Violation]:
    """Every promise of document processing, and those other contexts registered (``invariant_register``)."""
    violations = (
        jobs_past_deadlines(slack)
        + terminal_commits_match()
        + one_delivery_per_success()
        + artifacts_from_current_claims()
        + artifact_bytes_intact()
        + unreferenced_blobs(slack)
    )
    for check in _CHECKS:
        violations += check()
    if include_outbox:
        violations += outbox_not_stuck()
    return violations
