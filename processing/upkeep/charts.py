"""The Overview's charts, read from the rollups: one shared time axis per window and, per figure, one series
per operation that did anything in it (uPlot's data layout: x values, then aligned y values, None for gaps)."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from processing.models import OperationRollup, Resolution

WINDOWS = {
    "1h": (Resolution.MINUTE, timedelta(hours=1)),
    "24h": (Resolution.MINUTE, timedelta(hours=24)),
    "7d": (Resolution.HOUR, timedelta(days=7)),
}

# figure → (its words, how a bucket's row gives it)
FIGURES = {
    "queued": ("Queued jobs", lambda row: row["queued"]),
    "oldest_queued_seconds": ("Oldest queued (s)", lambda row: row["oldest_queued_seconds"]),
    "finished": ("Finished jobs per bucket", lambda row: row["succeeded"] + row["failed"] + row["cancelled"]),
    "failed": ("Failed jobs per bucket", lambda row: row["failed"]),
    "run_ms_p50": ("Run time p50 (ms)", lambda row: row["run_ms_p50"]),
    "run_ms_p95": ("Run time p95 (ms)", lambda row: row["run_ms_p95"]),
}
_COLUMNS = (
    "bucket_start", "operation", "queued", "oldest_queued_seconds", "succeeded", "failed", "cancelled",
    "run_ms_p50", "run_ms_p95", "started", "expired", "lease_losses",
)  # fmt: skip


@dataclass(frozen=True)
class ChartData:
    window: str
    resolution: str
    generated_at: datetime
    x: list[int]  # bucket starts, epoch seconds
    operations: list[str]
    figures: dict[str, dict[str, list]]  # figure → operation → values aligned with x

    def as_json(self) -> dict:
        return {
            "window": self.window,
            "resolution": self.resolution,
            "generated_at": self.generated_at.isoformat(),
            "x": self.x,
            "operations": self.operations,
            "figures": {name: {"label": FIGURES[name][0], "series": series} for name, series in self.figures.items()},
        }


def chart_data(window: str, now: datetime) -> ChartData:
    resolution, span = WINDOWS[window]
    rows = list(
        OperationRollup.objects.filter(resolution=resolution, bucket_start__gt=now - span)
        .order_by("bucket_start", "operation")
        .values(*_COLUMNS)
    )
    x = sorted({int(row["bucket_start"].timestamp()) for row in rows})
    position = {moment: index for index, moment in enumerate(x)}
    operations = sorted({row["operation"] for row in rows if _active(row)})
    figures = {name: {operation: [None] * len(x) for operation in operations} for name in FIGURES}
    for row in rows:
        if row["operation"] not in operations:
            continue
        index = position[int(row["bucket_start"].timestamp())]
        for name, (_, value) in FIGURES.items():
            figures[name][row["operation"]][index] = value(row)
    return ChartData(window, resolution, now, x, operations, figures)


def _active(row) -> bool:
    """An operation is charted when a bucket of the window saw it queue, start or finish anything."""
    counts = ("started", "succeeded", "failed", "cancelled", "expired", "lease_losses")
    return bool(row["queued"]) or any(row[count] for count in counts)
