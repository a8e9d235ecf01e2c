"""Worker request replay in two round trips instead of four.

``processing_replay_begin`` takes the request's session-level advisory lock and,
only once it holds it, looks up a stored response: the function takes a fresh snapshot
for that second statement, so a response stored by a request that ended just
before the lock was taken is seen (one plain statement would read first and lock
after, a window for running the handler twice). ``processing_replay_end`` stores
the response, when there is one to store, and releases the lock.
"""

from django.db import migrations

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [("processing", "0007_claim_several")]

    # The current definitions: processing/protocol/sql/replay.sql.
    operations = [run_frozen_sql("0008_replay.sql", "0008_replay_drop.sql")]
