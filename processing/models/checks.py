from django.db import models


class InvariantReport(models.Model):
    """The latest run of the invariant checker by the maintenance loop (processing/upkeep/alerts.py): one row,
    replaced at each run, read by the admin Overview's alerts and ``/metrics``."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1, editable=False)
    checked_at = models.DateTimeField()
    seconds = models.FloatField(help_text="How long the check took.")
    violations = models.JSONField(default=list, help_text="Each broken promise as the checker words it.")

    def __str__(self) -> str:
        return f"{len(self.violations)} violation(s) at {self.checked_at:%Y-%m-%d %H:%M:%S}"
