"""The claim function plans without bitmap scans, so its candidate query walks the queue's index in order.

Jobs arrive in bursts between two analyzes of the job table. With statistics that say the queue
holds a row or two, PostgreSQL planned the candidate query (``ORDER BY created_at LIMIT 1`` over
``state = 'queued'``) as a bitmap scan of every queued row and a sort: each candidate read the whole
queue. In a 5,000-job drain at service level (2 processes, auto_explain and pg_stat_statements) that
query averaged 1.0 ms and 149 buffers a call, more than half of PostgreSQL's time. Without bitmap
scans the remaining plan is the ``job_queue`` index walked from its head, which needs no statistics.
The setting holds inside the function only.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0011_queue_tables_autovacuum")]

    operations = [
        run_frozen_sql("0012_claim_without_bitmap_scans.sql", "0012_claim_without_bitmap_scans_reset.sql"),
    ]
