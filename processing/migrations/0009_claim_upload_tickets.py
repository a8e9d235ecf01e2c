"""A claim's upload tickets are made by the claim itself: one per result role of the claimed job's operation.

They were a second statement after the claim (≈0.9 ms on every pickup and a
commit per job). The claim function now also takes each offered operation's
result roles with their byte limits, and enough ticket ids and secret digests
(the caller sizes the arrays for the most roles any offered operation has);
each claim returns its tickets' roles, ids and limits. Otherwise each claim is
made exactly as in migration 0007.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0008_replay_functions")]

    # Reversed, the function of 0007 comes back.
    operations = [
        run_frozen_sql(("0007_claim_drop.sql", "0009_claim.sql"), ("0009_claim_drop.sql", "0007_claim.sql")),
    ]
