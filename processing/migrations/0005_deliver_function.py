"""Delivery acceptance as one database function: one round trip instead of seven (see processing/queue/delivery.py).

The steps are those ``delivery_accept`` took as separate statements: lock the job of the claim
(the order cancellation and the reapers use), read the attempt under that lock (a later statement,
so a fresh snapshot: a release or a reaper may have ended it meanwhile), check the claim is current
by database time, check the operation's required roles are staged, then end the attempt as
delivered and move the job running → finalizing (processing.transitions.ALLOWED), guarded the same way.

A job whose cancellation was requested is left untouched: the function answers
``cancellation_requested`` and the caller ends it on the transactional path.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0004_job_ended_notify")]

    operations = [run_frozen_sql("0005_deliver.sql", "0005_deliver_drop.sql")]
