"""NOTIFY ``quire_job_ended`` with the job id when a job's terminal commit is inserted.

A trigger, so every path to a terminal state wakes the requests waiting for the job
(``GET /v1/processing/jobs/{id}?wait=…``) without a statement of its own. PostgreSQL
delivers the notification only if the transaction commits.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0003_claim_function")]

    # The current definition: processing/queue/sql/job_ended_notify.sql.
    operations = [run_frozen_sql("0004_job_ended_notify.sql", "0004_job_ended_notify_drop.sql")]
