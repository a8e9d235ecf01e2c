"""The operators' history: one row per operation per minute (kept two days) and per hour (kept 90 days).

The maintenance loop calls ``rollups_pass`` on every sweep. A minute is written as soon as it has ended
(with the queue's gauges sampled then) and written again on the passes of the next ``SETTLE``, so a job that
committed a moment after its bucket ended is counted; minutes missed while the loop was down are caught up (the
last ``CATCH_UP`` of them), without gauges. An hour is written from its jobs once it has ended and again
within ``SETTLE`` of that, its gauges the most its minutes held. A bucket costs what its own rows cost
(``sql/rollup_bucket.sql`` reads them by index), never a scan of all history. Several loops may run at
once: a bucket is an upsert of the same figures.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.db import connection, transaction

from processing.kernel.clock import db_now
from processing.models import OperationRollup, Resolution
from processing.operations import REGISTRY

SETTLE = timedelta(minutes=2)
CATCH_UP = 30
KEPT = {Resolution.MINUTE: timedelta(days=2), Resolution.HOUR: timedelta(days=90)}
LENGTH = {Resolution.MINUTE: timedelta(minutes=1), Resolution.HOUR: timedelta(hours=1)}
_BUCKET_SQL = (Path(__file__).with_name("sql") / "rollup_bucket.sql").read_text()


@dataclass(frozen=True)
class PassReport:
    minutes: int
    hours: int
    retired: int
    caught_up: int  # buckets written only now, more than SETTLE after they ended: the loop had not run


def bucket_write(resolution: Resolution, start: datetime, *, sample: bool = False) -> None:
    """Compute one bucket's row per operation (sampling the queue's gauges now when ``sample``)."""
    params = {
        "resolution": resolution,
        "start": start,
        "end": start + LENGTH[resolution],
        "sample": sample,
        "from_minutes": resolution == Resolution.HOUR,
        "operations": sorted(REGISTRY),
    }
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_BUCKET_SQL, params)


def rollups_pass(now: datetime | None = None) -> PassReport:
    now = now or db_now()
    minutes, late_minutes = _due(Resolution.MINUTE, now)
    for start in minutes:
        # Gauges only for the minute that has just ended: the queue now is what it held then.
        bucket_write(
            Resolution.MINUTE, start, sample=now - (start + LENGTH[Resolution.MINUTE]) < LENGTH[Resolution.MINUTE]
        )
    hours, late_hours = _due(Resolution.HOUR, now)
    for start in hours:
        bucket_write(Resolution.HOUR, start)
    return PassReport(len(minutes), len(hours), _retire(now), late_minutes + late_hours)


def _due(resolution: Resolution, now: datetime) -> tuple[list[datetime], int]:
    """The buckets to write: those that ended within SETTLE (again), and those missing since the last one;
    and how many of those missing had ended before SETTLE."""
    length = LENGTH[resolution]
    last_ended = _floor(now, resolution) - length
    settling = [start for start in _starts(last_ended, now - SETTLE - length, length)]
    latest = (
        OperationRollup.objects.filter(resolution=resolution, bucket_start__lte=last_ended)
        .order_by("-bucket_start")
        .values_list("bucket_start", flat=True)
        .first()
    )
    oldest_kept = now - KEPT[resolution]
    missing_from = max(latest + length if latest else last_ended, oldest_kept, last_ended - length * CATCH_UP)
    missing = _starts(last_ended, missing_from - length, length)
    due = sorted(set(settling) | set(missing))[-CATCH_UP:]
    return due, len(set(due) - set(settling))


def _starts(last: datetime, after: datetime, length: timedelta) -> list[datetime]:
    """Bucket starts from ``last`` back to (not including) ``after``."""
    starts, start = [], last
    while start > after:
        starts.append(start)
        start -= length
    return starts


def _floor(moment: datetime, resolution: Resolution) -> datetime:
    floored = moment.replace(second=0, microsecond=0)
    return floored.replace(minute=0) if resolution == Resolution.HOUR else floored


def _retire(now: datetime) -> int:
    retired = 0
    for resolution, kept in KEPT.items():
        retired += OperationRollup.objects.filter(resolution=resolution, bucket_start__lt=now - kept).delete()[0]
    return retired
