import uuid

from django.db import models
from django.db.models import Q


class OutboxEvent(models.Model):
    """A committed fact still owed to the broker. Inserted in the transaction that made the fact true."""

    event_id = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=64)
    payload = models.JSONField()
    created_at = models.DateTimeField()
    available_at = models.DateTimeField()
    dispatched_at = models.DateTimeField(null=True, blank=True)
    attempts = models.IntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        indexes = [
            models.Index(fields=["available_at", "id"], condition=Q(dispatched_at__isnull=True), name="outbox_pending"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.event_id}"
