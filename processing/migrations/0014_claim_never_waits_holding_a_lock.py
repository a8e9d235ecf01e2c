"""An acquire of several claims waits for a requester's or project's lock only while it holds none.

Two acquires whose queues alternate between two requesters each took one requester's lock for its first
claim and waited for the other's for its second: a deadlock, which PostgreSQL broke by failing one of them.
Once it holds a lock, the claim now only tries the next candidate's locks and passes over a candidate whose
locks another acquire holds (tests/processing/queue/test_running_limits_hold_under_concurrent_claimers.py).
Otherwise each claim is made exactly as in migrations 0009 and 0012, bitmap scans off included.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0013_job_captured_versions")]

    # Reversed, the function of 0009 with 0012's setting comes back.
    operations = [
        run_frozen_sql(
            ("0009_claim_drop.sql", "0014_claim.sql"),
            ("0009_claim_drop.sql", "0009_claim.sql", "0012_claim_without_bitmap_scans.sql"),
        ),
    ]
