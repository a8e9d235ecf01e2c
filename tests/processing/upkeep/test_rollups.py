"""The operators' rollups: a scripted hour of jobs gives, per minute and for the hour, rows whose counts and
percentiles equal a direct computation from the job and attempt rows; recomputing a bucket changes nothing;
old buckets are retired."""

import uuid
from collections import Counter
from datetime import timedelta

import pytest
from django.forms.models import model_to_dict
from django.utils import timezone

from processing.models import (
    AttemptState,
    JobState,
    OperationRollup,
    ProcessingAttempt,
    ProcessingJob,
    Resolution,
)
from processing.upkeep.rollups import KEPT, bucket_write, rollups_pass
from tests.concurrency import run_together
from tests.processing import worker_calls as worker

pytestmark = pytest.mark.django_db

ECHO, LATEX = "test.echo/v1", "latex.compile.pdf/v1"
HOUR = timezone.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=3)
FAILURES = ["processor_rejected", "resource_limit", "transient_infrastructure"]


def percentile(values: list[float], fraction: float) -> float | None:
    """PostgreSQL's percentile_cont: linear interpolation between the two nearest ranks."""
    if not values:
        return None
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def scripted_hour(owner) -> None:
    """180 jobs over the hour: most run once and succeed, some fail (by class), some lose their first lease
    and run again, some are cancelled while queued, some reuse an earlier result."""
    for n in range(180):
        queued_at = HOUR + timedelta(seconds=20 * n)
        operation = ECHO if n % 4 else LATEX
        started_at = queued_at + timedelta(milliseconds=50 + 37 * (n % 11))
        completed_at = started_at + timedelta(milliseconds=400 + 113 * (n % 17))
        kind = ["succeeded", "succeeded", "failed", "relost", "cancelled", "reused"][n % 6]
        job = ProcessingJob.objects.create(
            operation=operation,
            requester_id=owner.pk,
            options_digest="0" * 64,
            state={"relost": JobState.SUCCEEDED, "reused": JobState.SUCCEEDED}.get(kind, kind),
            queued_at=queued_at,
            started_at=None if kind in ("cancelled", "reused") else started_at,
            completed_at=completed_at,
            failure_class=FAILURES[(n // 6) % 3] if kind == "failed" else "",
            cache_hit=kind == "reused",
            reused_from_id=uuid.uuid4() if kind == "reused" else None,
        )
        if kind in ("cancelled", "reused"):
            continue
        attempts = [(AttemptState.LOST, started_at, started_at + timedelta(seconds=3))] if kind == "relost" else []
        second = started_at + timedelta(seconds=4) if kind == "relost" else started_at
        attempts.append((AttemptState.DELIVERED if kind != "failed" else AttemptState.FAILED, second, completed_at))
        for number, (state, began, ended) in enumerate(attempts, start=1):
            ProcessingAttempt.objects.create(
                job=job,
                number=number,
                operation=operation,
                processor_contract="c/1",
                state=state,
                lease_expires_at=ended,
                started_at=began,
                ended_at=ended,
            )


def expected(operation: str, start, end) -> dict:
    """The bucket's figures computed directly from the rows, as the rollup promises them."""
    jobs = list(ProcessingJob.objects.filter(operation=operation, completed_at__gte=start, completed_at__lt=end))
    attempts = list(ProcessingAttempt.objects.filter(operation=operation, started_at__gte=start, started_at__lt=end))
    lost = ProcessingAttempt.objects.filter(
        operation=operation, state=AttemptState.LOST, ended_at__gte=start, ended_at__lt=end
    )
    states = Counter(job.state for job in jobs)
    runs = [
        (job.completed_at - job.started_at).total_seconds() * 1000
        for job in jobs
        if job.state in (JobState.SUCCEEDED, JobState.FAILED) and job.started_at and not job.cache_hit
    ]
    pickups = [
        (attempt.started_at - attempt.job.queued_at).total_seconds() * 1000
        for attempt in attempts
        if attempt.number == 1
    ]
    return {
        "started": len(attempts),
        "succeeded": states[JobState.SUCCEEDED],
        "failed": states[JobState.FAILED],
        "cancelled": states[JobState.CANCELLED],
        "expired": states[JobState.EXPIRED],
        "reused": sum(job.cache_hit for job in jobs),
        "lease_losses": lost.count(),
        "failure_classes": dict(Counter(job.failure_class for job in jobs if job.state == JobState.FAILED)),
        "pickup_ms_p50": percentile(pickups, 0.5),
        "pickup_ms_p95": percentile(pickups, 0.95),
        "run_ms_p50": percentile(runs, 0.5),
        "run_ms_p95": percentile(runs, 0.95),
    }


def row_figures(row: OperationRollup) -> dict:
    return {field: getattr(row, field) for field in expected(ECHO, HOUR, HOUR)}


def assert_figures_equal(row: OperationRollup, wanted: dict) -> None:
    got = row_figures(row)
    for field, value in wanted.items():
        if isinstance(value, float):
            assert got[field] == pytest.approx(value, abs=1e-6), (row, field)
        else:
            assert got[field] == value, (row, field)


def test_each_minute_and_the_hour_equal_a_direct_computation_from_the_rows(owner):
    scripted_hour(owner)
    minutes = [HOUR + timedelta(minutes=m) for m in range(61)]  # the last minute holds the hour's stragglers
    for start in minutes:
        bucket_write(Resolution.MINUTE, start)
    bucket_write(Resolution.HOUR, HOUR)

    for operation in (ECHO, LATEX):
        for start in minutes:
            row = OperationRollup.objects.get(resolution=Resolution.MINUTE, operation=operation, bucket_start=start)
            assert_figures_equal(row, expected(operation, start, start + timedelta(minutes=1)))
        hour = OperationRollup.objects.get(resolution=Resolution.HOUR, operation=operation, bucket_start=HOUR)
        assert_figures_equal(hour, expected(operation, HOUR, HOUR + timedelta(hours=1)))
    hour = OperationRollup.objects.get(resolution=Resolution.HOUR, operation=ECHO, bucket_start=HOUR)
    assert hour.succeeded > 0 and hour.failed > 0 and hour.lease_losses > 0 and hour.reused > 0
    assert set(hour.failure_classes) == set(FAILURES)


def test_recomputing_a_bucket_changes_nothing(owner):
    scripted_hour(owner)
    for start in (HOUR + timedelta(minutes=7), HOUR):
        resolution = Resolution.HOUR if start == HOUR else Resolution.MINUTE
        bucket_write(resolution, start)
        first = [model_to_dict(row) for row in OperationRollup.objects.filter(resolution=resolution).order_by("id")]
        bucket_write(resolution, start)
        again = [model_to_dict(row) for row in OperationRollup.objects.filter(resolution=resolution).order_by("id")]
        assert again == first


def test_the_minute_just_ended_samples_the_queue(owner):
    worker.queue_echo_jobs(owner, 2)
    now = timezone.now()
    ended = now.replace(second=0, microsecond=0) - timedelta(minutes=1)

    rollups_pass(now)

    row = OperationRollup.objects.get(resolution=Resolution.MINUTE, operation=ECHO, bucket_start=ended)
    assert (row.queued, row.running) == (2, 0)
    assert row.oldest_queued_seconds >= 0
    older = OperationRollup.objects.filter(resolution=Resolution.MINUTE, bucket_start__lt=ended - timedelta(minutes=1))
    assert not older.exists(), "a fresh database starts at the last minute"


def test_a_pass_after_downtime_catches_up_the_minutes_it_missed_and_says_so():
    ended = timezone.now().replace(second=0, microsecond=0) - timedelta(minutes=1)
    rollups_pass(ended - timedelta(minutes=10) + timedelta(seconds=1))  # the loop ran, then was down 10 minutes

    after_downtime = rollups_pass(ended + timedelta(minutes=1, seconds=1))
    again = rollups_pass(ended + timedelta(minutes=1, seconds=6))  # the next pass, five seconds on

    written = set(OperationRollup.objects.filter(resolution=Resolution.MINUTE).values_list("bucket_start", flat=True))
    assert written >= {ended - timedelta(minutes=m) for m in range(11)}, "every minute of the downtime is written"
    assert after_downtime.caught_up >= 7 and again.caught_up == 0, "routine passes report nothing"


def test_an_hours_gauges_are_the_most_its_minutes_held():
    for minute, queued in ((0, 3), (1, 9), (2, 4)):
        bucket_write(Resolution.MINUTE, HOUR + timedelta(minutes=minute))
        OperationRollup.objects.filter(bucket_start=HOUR + timedelta(minutes=minute), operation=ECHO).update(
            queued=queued, running=queued // 2, oldest_queued_seconds=queued * 10.0
        )

    bucket_write(Resolution.HOUR, HOUR)

    hour = OperationRollup.objects.get(resolution=Resolution.HOUR, operation=ECHO, bucket_start=HOUR)
    assert (hour.queued, hour.running, hour.oldest_queued_seconds) == (9, 4, 90.0)


def test_old_buckets_are_retired(owner):
    now = timezone.now()
    for resolution, kept in KEPT.items():
        bucket_write(resolution, (now - kept - timedelta(hours=2)).replace(minute=0, second=0, microsecond=0))
    assert OperationRollup.objects.exists()

    rollups_pass(now)

    assert not OperationRollup.objects.filter(bucket_start__lt=now - KEPT[Resolution.MINUTE]).exists()


@pytest.mark.django_db(transaction=True)  # the writers are other connections: the rows must be committed
def test_maintenance_loops_writing_the_same_buckets_at_once_agree(owner):
    """Several Core processes may run the maintenance loop: writers of one bucket at the same moment leave one
    row per operation, with the figures a single writer gives."""
    scripted_hour(owner)
    minute = HOUR + timedelta(minutes=7)
    writers = [lambda: bucket_write(Resolution.MINUTE, minute) for _ in range(4)]
    writers += [lambda: bucket_write(Resolution.HOUR, HOUR) for _ in range(4)]

    errors = run_together(*writers)

    assert errors == []
    for resolution, start, length in (
        (Resolution.MINUTE, minute, timedelta(minutes=1)),
        (Resolution.HOUR, HOUR, timedelta(hours=1)),
    ):
        for operation in (ECHO, LATEX):
            (row,) = OperationRollup.objects.filter(resolution=resolution, operation=operation, bucket_start=start)
            assert_figures_equal(row, expected(operation, start, start + length))
