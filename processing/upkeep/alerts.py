"""What an operator must hear of without reading logs: the banner on the admin Overview, and the same
situations as ``/metrics`` figures that the shipped alerting rules (config/prometheus/alerts.yml) fire on.

Each alert is named as its Prometheus rule is. They are read from the database, so every server process shows
the same: a finalizer that crashed in the last hour, finalizations past their lease (the maintenance loop is
not recovering them), the invariant checker's latest findings (the maintenance loop runs it every
``QUIRE_INVARIANT_CHECK_SECONDS`` and keeps its report), and an outbox event waiting longer than its
threshold. Other contexts add theirs (``alert_source_register``): Office says when its conversion host does
not answer.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Max, Min

from processing.finalization.finalize import FINALIZER_CRASHED
from processing.kernel.clock import db_now
from processing.models import InvariantReport, JobState, OutboxEvent, ProcessingJob
from processing.upkeep.invariants import OUTBOX_MAX_PENDING, check_all

FINALIZER_CRASH_WINDOW = timedelta(hours=1)
FINALIZATION_SLACK = timedelta(seconds=60)  # a recovery pass runs every few seconds: past this, none does


@dataclass(frozen=True)
class Alert:
    name: str  # the alerting rule's name (config/prometheus/alerts.yml)
    summary: str


_SOURCES: list[Callable[[], list[Alert]]] = []


def alert_source_register(source: Callable[[], list[Alert]]) -> None:
    """Another context's alerts, shown with Processing's (called at its app's ``ready``)."""
    if source not in _SOURCES:
        _SOURCES.append(source)


def finalizer_crashes(now):
    code = FINALIZER_CRASHED[1]
    return ProcessingJob.objects.filter(
        state=JobState.FAILED, failure_code=code, completed_at__gt=now - FINALIZER_CRASH_WINDOW
    )


def finalizations_overdue(now):
    return ProcessingJob.objects.filter(state=JobState.FINALIZING, finalization_expires_at__lt=now - FINALIZATION_SLACK)


def operator_alerts() -> list[Alert]:
    now = db_now()
    alerts = []
    crashed = finalizer_crashes(now).aggregate(count=Count("pk"), latest=Max("completed_at"))
    if crashed["count"]:
        alerts.append(
            Alert(
                "QuireFinalizerCrashed",
                f"A finalizer crashed on {crashed['count']} job(s) in the last hour (failure code finalizer_error, "
                f"latest at {crashed['latest']:%H:%M:%S}); the server log has the traceback.",
            )
        )
    if overdue := finalizations_overdue(now).count():
        alerts.append(
            Alert(
                "QuireFinalizationsOverdue",
                f"{overdue} finalization(s) are past their lease and nobody recovers them: is "
                "manage.py processing_maintain running?",
            )
        )
    alerts += _invariant_alerts(now)
    oldest = OutboxEvent.objects.filter(dispatched_at__isnull=True).aggregate(oldest=Min("created_at"))["oldest"]
    if oldest is not None and now - oldest > OUTBOX_MAX_PENDING:
        alerts.append(
            Alert(
                "QuireOutboxBehind",
                f"The oldest outbox event has waited {_minutes(now - oldest)} (threshold "
                f"{_minutes(OUTBOX_MAX_PENDING)}): is manage.py outbox_relay running and its broker reachable?",
            )
        )
    for source in _SOURCES:
        alerts += source()
    return alerts


def _invariant_alerts(now) -> list[Alert]:
    report = InvariantReport.objects.first()
    if report is None:
        return []
    alerts = []
    if report.violations:
        shown = "; ".join(report.violations[:3])
        alerts.append(
            Alert(
                "QuireInvariantBroken",
                f"The invariant checker found {len(report.violations)} broken promise(s) at "
                f"{report.checked_at:%H:%M:%S}: {shown}",
            )
        )
    if now - report.checked_at > invariant_check_stale_after():
        alerts.append(
            Alert(
                "QuireInvariantCheckStale",
                f"The invariant checker last ran {_minutes(now - report.checked_at)} ago: is manage.py "
                "processing_maintain running?",
            )
        )
    return alerts


def invariant_check_stale_after() -> timedelta:
    return timedelta(seconds=3 * settings.QUIRE_INVARIANT_CHECK_SECONDS)


def invariants_check_if_due() -> int:
    """The maintenance loop's step: run the checker when its last report is older than the interval and keep
    the report; the number of violations found (0 when not due)."""
    report = InvariantReport.objects.first()
    now = db_now()
    if report is not None and now - report.checked_at < timedelta(seconds=settings.QUIRE_INVARIANT_CHECK_SECONDS):
        return 0
    started = time.monotonic()
    violations = [str(violation) for violation in check_all()]
    InvariantReport.objects.update_or_create(
        pk=1,
        defaults={"checked_at": db_now(), "seconds": time.monotonic() - started, "violations": violations[:200]},
    )
    return len(violations)


def _minutes(span: timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    return f"{minutes} min" if minutes < 120 else f"{minutes // 60} h"
