"""The tables every job churns are vacuumed and analyzed after a fixed number of changes (migration 0011)."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

CHURNED = ["processing_processingjob", "processing_processingattempt", "processing_transferticket",
           "processing_stagedoutput"]  # fmt: skip


@pytest.mark.parametrize("table", CHURNED)
def test_a_churned_table_is_vacuumed_and_analyzed_after_a_fixed_number_of_changes(table):
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = %s", [table])
        options = dict(option.split("=", 1) for option in cursor.fetchone()[0] or [])

    assert options["autovacuum_vacuum_scale_factor"] == options["autovacuum_analyze_scale_factor"] == "0"
    assert int(options["autovacuum_vacuum_threshold"]) <= 2000
    assert int(options["autovacuum_analyze_threshold"]) <= 2000
