"""The claim as one database function: one round trip instead of nine (the claim is Python since migration 0014).

A procedural function takes a fresh snapshot for each statement (READ COMMITTED),
so the lock-then-recount steps keep the meaning they had as separate queries.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0002_queue_indexes")]

    operations = [
        # The same key as processing.advisory.advisory_key: the first 8 bytes of sha256("namespace:value"), signed.
        run_frozen_sql("0003_advisory_key.sql", "0003_advisory_key_drop.sql"),
        run_frozen_sql("0003_claim.sql", "0003_claim_drop.sql"),
    ]
