"""Drop three foreign-key indexes that a unique index leading with the same column already covers.

Every job writes an attempt, staged outputs and artifacts, so each surplus index was a write on the
hot path. Done in SQL: Django's ``AlterField(db_index=False)`` also drops every other index it finds
on the column, which here would include the partial unique indexes ``attempt_one_running_per_job``
and ``attempt_one_delivered_per_job``.
"""

from django.db import migrations, models
from django.db.models.deletion import CASCADE

DROPPED = {
    # index name: (table, column), each covered by the unique index named beside it
    "processing_processingattempt_job_id_0d40c257": ("processing_processingattempt", "job_id"),  # (job, number)
    "processing_stagedoutput_attempt_id_98bff769": ("processing_stagedoutput", "attempt_id"),  # (attempt, role)
    "processing_processingartifact_job_id_1556088f": ("processing_processingartifact", "job_id"),  # (job, role)
}

DROP = "".join(f'DROP INDEX IF EXISTS "{name}";' for name in DROPPED)
RECREATE = "".join(
    f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}");' for name, (table, column) in DROPPED.items()
)


class Migration(migrations.Migration):
    dependencies = [("processing", "0005_deliver_function")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(DROP, RECREATE)],
            state_operations=[
                migrations.AlterField(
                    model_name="processingartifact",
                    name="job",
                    field=models.ForeignKey(
                        db_index=False, on_delete=CASCADE, related_name="artifacts", to="processing.processingjob"
                    ),
                ),
                migrations.AlterField(
                    model_name="processingattempt",
                    name="job",
                    field=models.ForeignKey(
                        db_index=False, on_delete=CASCADE, related_name="attempts", to="processing.processingjob"
                    ),
                ),
                migrations.AlterField(
                    model_name="stagedoutput",
                    name="attempt",
                    field=models.ForeignKey(
                        db_index=False, on_delete=CASCADE, related_name="staged", to="processing.processingattempt"
                    ),
                ),
            ],
        )
    ]
