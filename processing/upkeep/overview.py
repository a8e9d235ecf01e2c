"""The operators' overview (admin): queue, workers, failures and lease losses, read from the database.

The same figures as ``/metrics`` (docs/architecture.md §9), shaped for one page.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Max, Min, Q

from processing.kernel.capabilities import capabilities_list
from processing.kernel.clock import db_now
from processing.models import (
    AttemptState,
    JobState,
    OutboxEvent,
    ProcessingAttempt,
    ProcessingJob,
    SessionState,
    WorkerSession,
)
from processing.queue.pauses import paused_operations

WINDOW = timedelta(hours=24)
STALE_AFTER = timedelta(seconds=20)  # four missed heartbeats of an agent's default five-second beat


@dataclass(frozen=True)
class QueueFigure:
    operation: str
    capability: str  # available | waiting | "" (not exposed here)
    depth: int
    oldest_age: timedelta | None
    running: int
    paused_by: str = ""  # the operator who paused it; "" while it runs
    paused_at: datetime | None = None


@dataclass(frozen=True)
class SessionFigure:
    id: uuid.UUID
    identity: str
    instance: str
    state: str
    last_heartbeat_at: datetime
    expires_at: datetime
    processors: tuple[str, ...]
    active_attempts: int
    heartbeat_age: timedelta
    stale: bool  # no heartbeat for longer than STALE_AFTER: the agent may be stuck or gone


@dataclass(frozen=True)
class FailureGroup:
    failure_class: str
    failure_code: str
    count: int
    first_seen: datetime
    last_seen: datetime
    example_job_id: uuid.UUID


@dataclass(frozen=True)
class Overview:
    generated_at: datetime
    queue: tuple[QueueFigure, ...]
    sessions: tuple[SessionFigure, ...]
    failures_24h: tuple[FailureGroup, ...]
    lease_losses_24h: int
    lease_losses_total: int
    outbox_pending: int
    outbox_oldest_at: datetime | None


def _queue(now: datetime) -> tuple[QueueFigure, ...]:
    queued = {
        row["operation"]: row
        for row in ProcessingJob.objects.filter(state=JobState.QUEUED)
        .values("operation")
        .annotate(depth=Count("pk"), oldest=Min("queued_at"))
        .order_by()
    }
    running = dict(
        ProcessingAttempt.objects.filter(state=AttemptState.RUNNING)
        .values("operation")
        .annotate(n=Count("pk"))
        .order_by()
        .values_list("operation", "n")
    )
    exposed = {capability.operation: capability.state for capability in capabilities_list()}
    paused = paused_operations()
    figures = []
    for operation in sorted(set(exposed) | set(queued) | set(running) | set(paused)):
        row = queued.get(operation, {})
        oldest = row.get("oldest")
        pause = paused.get(operation)
        figures.append(
            QueueFigure(
                operation,
                exposed.get(operation, ""),
                row.get("depth", 0),
                now - oldest if oldest else None,
                running.get(operation, 0),
                pause.paused_by if pause else "",
                pause.paused_at if pause else None,
            )
        )
    return tuple(figures)


def _sessions(now: datetime) -> tuple[SessionFigure, ...]:
    live = (
        WorkerSession.objects.filter(state__in=[SessionState.ACTIVE, SessionState.DRAINING])
        .annotate(active=Count("attempts", filter=Q(attempts__state=AttemptState.RUNNING)))
        .prefetch_related("processors")
        .order_by("identity", "instance")
    )
    return tuple(
        SessionFigure(
            session.pk,
            session.identity,
            session.instance,
            session.state,
            session.last_heartbeat_at,
            session.expires_at,
            tuple(f"{p.operation} × {p.slots}" for p in session.processors.all()),
            session.active,
            now - session.last_heartbeat_at,
            now - session.last_heartbeat_at > STALE_AFTER,
        )
        for session in live
    )


FAILURE_GROUPS_SHOWN = 20


def _failure_groups(now: datetime) -> tuple[FailureGroup, ...]:
    """Failed jobs of the window by class and code, most frequent first, each with its first and last time
    and its latest job as an example."""
    failed = ProcessingJob.objects.filter(state=JobState.FAILED, completed_at__gte=now - WINDOW)
    groups = (
        failed.values("failure_class", "failure_code")
        .annotate(n=Count("pk"), first=Min("completed_at"), last=Max("completed_at"))
        .order_by("-n", "failure_class", "failure_code")[:FAILURE_GROUPS_SHOWN]
    )
    latest = (  # each group's latest job, all in one statement (DISTINCT ON)
        failed.order_by("failure_class", "failure_code", "-completed_at")
        .distinct("failure_class", "failure_code")
        .values_list("failure_class", "failure_code", "pk")
    )
    examples = {(failure_class, code): job_id for failure_class, code, job_id in latest}
    return tuple(
        FailureGroup(
            group["failure_class"],
            group["failure_code"],
            group["n"],
            group["first"],
            group["last"],
            examples[group["failure_class"], group["failure_code"]],
        )
        for group in groups
    )


def processing_overview() -> Overview:
    """Queue depth and oldest age per operation, active attempts per live session, failures by class
    in the last 24 hours, lease losses, and the outbox backlog."""
    now = db_now()
    lost = ProcessingAttempt.objects.filter(state=AttemptState.LOST)
    pending = OutboxEvent.objects.filter(dispatched_at__isnull=True)
    return Overview(
        generated_at=now,
        queue=_queue(now),
        sessions=_sessions(now),
        failures_24h=_failure_groups(now),
        lease_losses_24h=lost.filter(ended_at__gte=now - WINDOW).count(),
        lease_losses_total=lost.count(),
        outbox_pending=pending.count(),
        outbox_oldest_at=pending.aggregate(oldest=Min("created_at"))["oldest"],
    )
