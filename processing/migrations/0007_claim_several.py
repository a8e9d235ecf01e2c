"""Several claims in one call: an agent offering n free permits may take up to n jobs in one round trip.

The claim function now takes how many claims to make and, for each, its claim id,
download ticket id and ticket secret digest (arrays of that length). Each claim is
made exactly as before (migration 0003), one candidate at a time, FIFO, with the
requester and project limits recounted after their advisory locks. What an offer
allows is computed once, after the session's processors are locked (so concurrent
claims of one session still queue there), and decremented per claim: the session's
registered slots minus its unexpired running claims, capped by the offer.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0006_fk_indexes_covered_by_unique")]

    # Reversed, the single-claim function of 0003 comes back.
    operations = [
        run_frozen_sql(("0003_claim_drop.sql", "0007_claim.sql"), ("0007_claim_drop.sql", "0003_claim.sql")),
    ]
