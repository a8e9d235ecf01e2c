"""The operators' audit trail: who did what, when, to how many jobs. Written in the action's own transaction."""

from django.db import models
from django.db.models import Q
from django.db.models.functions import Now


class ActionKind(models.TextChoices):
    CANCEL = "cancel"
    RETRY = "retry"
    BULK_CANCEL = "bulk_cancel"
    BULK_RETRY = "bulk_retry"
    PAUSE = "pause"
    RESUME = "resume"
    DRAIN = "drain"
    OFFICE_PREVIEWS = "office_previews"


class OperatorAction(models.Model):
    actor_id = models.IntegerField(help_text="The acting user's id (kept when the user is deleted).")
    actor_name = models.CharField(max_length=150, help_text="The acting user's username at the time.")
    at = models.DateTimeField(db_default=Now())
    action = models.CharField(max_length=32, choices=ActionKind.choices)
    subject = models.CharField(max_length=500, help_text="What was acted on: jobs, a filter, an operation, a session.")
    count = models.IntegerField(help_text="How many jobs (or operations, or sessions) the action reached.")
    outcome = models.JSONField(default=dict, help_text="What happened to them, by outcome: counts.")

    class Meta:
        ordering = ("-at", "-id")
        constraints = [
            models.CheckConstraint(condition=Q(action__in=ActionKind.values), name="operator_action_kind_known"),
            models.CheckConstraint(condition=Q(count__gte=0), name="operator_action_count_nonnegative"),
        ]
        indexes = [models.Index(fields=["-at"], name="operator_action_by_time")]
        # The acting role: staff users with this permission act; staff users with view permissions only look.
        permissions = [("operate", "Can act on jobs, operations and workers")]

    def __str__(self) -> str:
        return f"{self.actor_name} {self.action} {self.subject} ({self.count})"
