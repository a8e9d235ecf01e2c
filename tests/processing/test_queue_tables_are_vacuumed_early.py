"""The tables every job churns are vacuumed and analyzed after a small share of their rows changed (0011)."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

CHURNED = ["processing_processingjob", "processing_processingattempt", "processing_transferticket",
           "processing_stagedoutput"]  # fmt: skip


@pytest.mark.parametrize("table", CHURNED)
def test_a_churned_table_is_vacuumed_and_analyzed_after_a_small_share_of_its_rows_changed(table):
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [table])
        options = dict(option.split("=", 1) for option in cursor.fetchone()[0] or [])

    # PostgreSQL's defaults are 0.2 and 0.1 of the table, and 50 rows.
    assert float(options["autovacuum_vacuum_scale_factor"]) <= 0.02
    assert float(options["autovacuum_analyze_scale_factor"]) <= 0.02
    assert int(options["autovacuum_vacuum_threshold"]) <= 1000 and int(options["autovacuum_analyze_threshold"]) <= 1000
