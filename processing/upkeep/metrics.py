"""Prometheus figures for document processing (docs/architecture.md §9).

Queue and attempt figures are read from the database at scrape time (the
database is the truth, shared by every process); in-process counters cover
what only a process sees, such as a reaper step that failed.
"""

from django.db import DatabaseError, connection
from django.db.models import Count, Sum
from prometheus_client import REGISTRY, Counter
from prometheus_client.core import GaugeMetricFamily

from processing.kernel.clock import db_now
from processing.models import (
    AttemptState,
    InvariantReport,
    JobState,
    OperationPause,
    ProcessingAttempt,
    ProcessingJob,
    StagedOutput,
)
from processing.operations import REGISTRY as REGISTRY_OF_OPERATIONS
from processing.upkeep.alerts import finalizations_overdue, finalizer_crashes

cleanup_failures = Counter("quire_processing_cleanup_failures_total", "Reaper steps that raised.", ["step"])


def _queue_figures():
    depth = GaugeMetricFamily("quire_processing_queue_depth", "Queued jobs per operation.", labels=["operation"])
    age = GaugeMetricFamily(
        "quire_processing_queue_oldest_age_seconds", "Age of the oldest queued job.", labels=["operation"]
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT operation, count(*), coalesce(extract(epoch FROM now() - min(queued_at)), 0) "
            "FROM processing_processingjob WHERE state = 'queued' GROUP BY operation"
        )
        for operation, count, oldest in cursor.fetchall():
            depth.add_metric([operation], count)
            age.add_metric([operation], float(oldest))
    paused = GaugeMetricFamily(
        "quire_processing_operation_paused", "1 while an operator has paused the operation.", labels=["operation"]
    )
    held = set(OperationPause.objects.values_list("operation", flat=True))
    for operation in sorted(REGISTRY_OF_OPERATIONS):
        paused.add_metric([operation], 1 if operation in held else 0)
    return [depth, age, paused]


def _job_figures():
    states = GaugeMetricFamily("quire_processing_jobs", "Jobs by operation and state.", labels=["operation", "state"])
    for row in ProcessingJob.objects.values("operation", "state").annotate(n=Count("pk")).order_by():
        states.add_metric([row["operation"], row["state"]], row["n"])
    failures = GaugeMetricFamily(
        "quire_processing_failures_24h",
        "Failed jobs in the last 24 hours by class.",
        labels=["failure_class"],
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT failure_class, count(*) FROM processing_processingjob WHERE state = %s "
            "AND completed_at > now() - interval '24 hours' GROUP BY failure_class",
            [JobState.FAILED],
        )
        for failure_class, count in cursor.fetchall():
            failures.add_metric([failure_class], count)
    hits = GaugeMetricFamily("quire_processing_cache_hits", "Jobs satisfied by reuse (retained).")
    hits.add_metric([], ProcessingJob.objects.filter(cache_hit=True).count())
    return [states, failures, hits]


def _attempt_figures():
    active = GaugeMetricFamily("quire_processing_active_attempts", "Running attempts.", labels=["operation"])
    for row in ProcessingAttempt.objects.filter(state=AttemptState.RUNNING).values("operation").annotate(n=Count("pk")):
        active.add_metric([row["operation"]], row["n"])
    lost = GaugeMetricFamily("quire_processing_lease_losses", "Attempts that lost their lease (retained).")
    lost.add_metric([], ProcessingAttempt.objects.filter(state=AttemptState.LOST).count())
    durations = GaugeMetricFamily(
        "quire_processing_job_duration_seconds_p50",
        "Median end-to-end duration over the last hour.",
        labels=["operation"],
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT operation, "
            "percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - created_at)) "
            "FROM processing_processingjob WHERE state = 'succeeded' AND completed_at > now() - interval '1 hour' "
            "GROUP BY operation"
        )
        for operation, seconds in cursor.fetchall():
            durations.add_metric([operation], float(seconds))
    staged = GaugeMetricFamily("quire_processing_staged_bytes", "Bytes staged and not yet published or dropped.")
    staged.add_metric([], StagedOutput.objects.unpublished().aggregate(total=Sum("size_bytes"))["total"] or 0)
    return [active, lost, durations, staged]


def _outbox_figures():
    """Relay health from the database, so every process serves the same figures.

    The relay's own counters (``quire_outbox_published_total``,
    ``quire_outbox_publish_failures_total``) are served by ``outbox_relay --metrics-port``.
    """
    pending = GaugeMetricFamily("quire_outbox_pending", "Outbox events not yet confirmed by the broker.")
    age = GaugeMetricFamily("quire_outbox_pending_age_seconds", "Age of the oldest pending outbox event.")
    failing = GaugeMetricFamily(
        "quire_outbox_pending_failing", "Pending outbox events whose last publish attempt failed."
    )
    attempts = GaugeMetricFamily("quire_outbox_pending_max_attempts", "Most publish attempts of a pending event.")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), coalesce(extract(epoch FROM now() - min(created_at)), 0), "
            "count(*) FILTER (WHERE last_error <> ''), coalesce(max(attempts), 0) "
            "FROM processing_outboxevent WHERE dispatched_at IS NULL"
        )
        count, oldest, failed, most = cursor.fetchone()
    pending.add_metric([], count)
    age.add_metric([], float(oldest))
    failing.add_metric([], failed)
    attempts.add_metric([], most)
    return [pending, age, failing, attempts]


def _alert_figures():
    """The figures the shipped alerting rules fire on (config/prometheus/alerts.yml), as the Overview's banner
    reads them (processing/upkeep/alerts.py)."""
    now = db_now()
    crashes = GaugeMetricFamily(
        "quire_processing_finalizer_crashes_1h", "Jobs failed in the last hour because a finalizer crashed."
    )
    crashes.add_metric([], finalizer_crashes(now).count())
    overdue = GaugeMetricFamily(
        "quire_processing_finalizations_overdue", "Finalizations past their lease that nobody has recovered."
    )
    overdue.add_metric([], finalizations_overdue(now).count())
    figures = [crashes, overdue]
    report = InvariantReport.objects.first()
    if report is not None:
        violations = GaugeMetricFamily(
            "quire_processing_invariant_violations", "Broken promises the latest invariant check found."
        )
        violations.add_metric([], len(report.violations))
        age = GaugeMetricFamily(
            "quire_processing_invariant_check_age_seconds", "Seconds since the maintenance loop last checked."
        )
        age.add_metric([], (now - report.checked_at).total_seconds())
        figures += [violations, age]
    return figures


class ProcessingCollector:
    def collect(self):
        try:
            figures = [*_queue_figures(), *_job_figures(), *_attempt_figures(), *_outbox_figures(), *_alert_figures()]
        except DatabaseError:
            return []  # the database is out of reach: quire_database_up says so, and the other figures still show
        return figures


_registered = False


def collector_register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(ProcessingCollector())
        _registered = True
