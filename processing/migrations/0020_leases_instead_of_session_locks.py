"""Nothing that needs a session across transactions, so that Core can run behind PgBouncer in transaction mode.

A submission's preparation was held by a session-level advisory lock; it is now a lease on the job
(``preparation_lease_until``). A worker request in progress was a session-level advisory lock taken by
``processing_replay_begin``; it is now its own row without a response yet, held until its ``expires_at`` or
until the process holding it is gone (``holder_pid``/``holder_started``: its LISTEN connection's backend),
processing/protocol/sql/replay.sql. Jobs preparing when this runs get no lease, so a retry with their
key takes them over at once, as it did when their request's lock was gone.
"""

from django.db import migrations, models

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0019_job_list_indexes")]

    operations = [
        migrations.AddField(
            model_name="processingjob",
            name="preparation_lease_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(model_name="workerrequest", name="response_status", field=models.IntegerField(null=True)),
        migrations.AlterField(model_name="workerrequest", name="response_body", field=models.BinaryField(null=True)),
        migrations.AddField(model_name="workerrequest", name="holder_pid", field=models.IntegerField(null=True)),
        migrations.AddField(model_name="workerrequest", name="holder_started", field=models.DateTimeField(null=True)),
        run_frozen_sql(("0008_replay_drop.sql", "0020_replay.sql"), ("0020_replay_drop.sql", "0008_replay.sql")),
    ]
