# The maintenance loop finds preparations whose request died by their lease: a small index of preparing jobs,
# built concurrently so that a deployment's jobs table stays writable.

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("processing", "0020_leases_instead_of_session_locks"),
    ]

    operations = [
        AddIndexConcurrently(
            model_name="processingjob",
            index=models.Index(
                condition=models.Q(("state", "preparing")),
                fields=["preparation_lease_until"],
                name="job_preparation_lease",
            ),
        ),
    ]
