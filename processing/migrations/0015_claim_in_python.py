"""The claim leaves the database: its policy is written with the ORM in processing/queue/claims.py.

The function ``processing_claim`` (migrations 0003, 0007, 0009, 0012, 0014) is dropped. What the claim
still sends as SQL of its own, its writes and its lock statements, lives beside it in
``processing/queue/sql/`` as plain statements, not functions. ``processing_advisory_key`` stays: the
claim's candidates' statement derives its lock keys with it. Reversed, 0014's function comes back.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0014_claim_never_waits_holding_a_lock")]

    operations = [run_frozen_sql("0009_claim_drop.sql", "0014_claim.sql")]
