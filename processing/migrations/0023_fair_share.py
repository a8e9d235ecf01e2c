# The fair share as one database function the claim and the maintenance loop both use, and the mark a
# requester's build gets when the loop asks it to give its slot back (processing/queue/fair_share.py).

from django.db import migrations, models

from processing.migrations._frozen_sql import run_frozen_sql


class Migration(migrations.Migration):
    dependencies = [
        ("processing", "0022_blob_data_uncompressed"),
    ]

    operations = [
        migrations.AddField(
            model_name="processingattempt",
            name="yield_requested_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        run_frozen_sql("0023_fair_share.sql", "0023_fair_share_drop.sql"),
    ]
