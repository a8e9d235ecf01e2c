"""The delivery function also checks whose claim it is and the delivery's offers, and hands finalization its input.

A delivery over HTTP asked three statements before finalization could start: whose claim
this is (with the session's slots, to check the offers), the delivery itself, and the job,
its delivered attempt and staged outputs with their bytes for the finalizer. Now the function
takes the caller's identity (NULL at service level: no check) and offers, and answers:

- ``claim_lost`` as before, and also when the claim is not one a session of that identity made;
- ``already_delivered`` (with the job's row) for the identity's claim that was delivered already: a
  retried delivery whose first answer was never stored;
- ``offers_invalid`` (with ``invalid_offers``) before anything changes, when the session may still
  claim and an offer names an operation the session did not register or more permits than its slots;
- on acceptance, one row per staged output (one row without outputs if there are none), each with
  the job, the attempt and the output as whole rows of their tables and the output's bytes, read
  after the function's own updates. ``claimable`` says whether the session may still claim (not
  ended, not lapsed): offers of a session that may not are ignored, as before.

Otherwise delivery is accepted exactly as in migration 0005.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0009_claim_upload_tickets")]

    # Reversed, the function of 0005 comes back. The current definition: processing/queue/sql/deliver.sql.
    operations = [
        run_frozen_sql(("0005_deliver_drop.sql", "0010_deliver.sql"), ("0010_deliver_drop.sql", "0005_deliver.sql")),
    ]
