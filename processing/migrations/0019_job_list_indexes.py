# The operators' job list at a million jobs: built concurrently, so a deployment's jobs table stays writable.

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("processing", "0018_operation_rollups"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="processingjob",
            index=models.Index(fields=["-created_at", "-id"], name="job_by_created"),
        ),
        AddIndexConcurrently(
            model_name="processingjob",
            index=models.Index(
                condition=models.Q(("state__in", ("succeeded", "failed", "cancelled", "expired"))),
                fields=["state", "operation", "-created_at", "-id"],
                name="job_ended_by_state",
            ),
        ),
    ]
