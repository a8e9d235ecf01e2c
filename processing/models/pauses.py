from django.db import models
from django.db.models.functions import Now


class OperationPause(models.Model):
    """An operation an operator paused: no new claims of it until resumed (processing/queue/pauses.py).
    One row per paused operation; resuming deletes it."""

    operation = models.CharField(max_length=64, primary_key=True)
    paused_at = models.DateTimeField(db_default=Now())
    paused_by = models.CharField(max_length=150, help_text="The operator's username.")

    def __str__(self) -> str:
        return f"{self.operation} paused by {self.paused_by}"
