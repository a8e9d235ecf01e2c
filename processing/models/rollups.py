from django.db import models
from django.db.models import Q


class Resolution(models.TextChoices):
    MINUTE = "minute"
    HOUR = "hour"


class OperationRollup(models.Model):
    """One operation's figures over one bucket of time, for the operators' charts (processing/upkeep/rollups.py).

    Counts and percentiles are computed from the bucket's job and attempt rows, so recomputing a bucket gives
    the same row (``computed_at`` is when it was first written). The gauges (queued, oldest queued, running)
    are what the queue held when the bucket was first written: a sample, kept as first written, and empty for
    a bucket first written later than the minute after it.
    """

    resolution = models.CharField(max_length=8, choices=Resolution.choices)
    bucket_start = models.DateTimeField()
    operation = models.CharField(max_length=64)
    queued = models.IntegerField(null=True)
    oldest_queued_seconds = models.FloatField(null=True)
    running = models.IntegerField(null=True)
    started = models.IntegerField(default=0, help_text="Attempts that started in the bucket.")
    succeeded = models.IntegerField(default=0)
    failed = models.IntegerField(default=0)
    cancelled = models.IntegerField(default=0)
    expired = models.IntegerField(default=0)
    reused = models.IntegerField(default=0, help_text="Jobs that finished by reusing an earlier result.")
    lease_losses = models.IntegerField(default=0)
    failure_classes = models.JSONField(default=dict, help_text="Failed jobs by failure class.")
    pickup_ms_p50 = models.FloatField(null=True, help_text="Queued → first attempt started.")
    pickup_ms_p95 = models.FloatField(null=True)
    run_ms_p50 = models.FloatField(null=True, help_text="First attempt started → finished, for jobs that ran.")
    run_ms_p95 = models.FloatField(null=True)
    computed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["resolution", "operation", "bucket_start"], name="rollup_one_per_bucket"),
            models.CheckConstraint(condition=Q(resolution__in=Resolution.values), name="rollup_resolution_known"),
        ]
        indexes = [models.Index(fields=["resolution", "bucket_start"], name="rollup_by_time")]

    def __str__(self) -> str:
        return f"{self.operation} {self.resolution} {self.bucket_start:%Y-%m-%d %H:%M}"
