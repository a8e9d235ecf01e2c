"""The prepared cursor's statements: psycopg's placeholders as PostgreSQL's own, long ones included."""

import pytest

from foundation.database.prepared import native_placeholders, prepared_cursor


def test_placeholders_become_postgresqls_own_once_per_name():
    assert native_placeholders("SELECT %s, %s, '100%%'") == ("SELECT $1, $2, '100%'", ())
    assert native_placeholders("SELECT %(a)s, %(b)s, %(a)s") == ("SELECT $1, $2, $1", ("a", "b"))


@pytest.mark.parametrize("statement", ["SELECT %s, %(a)s", "SELECT 'a%' || %s"])
def test_a_statement_psycopg_would_refuse_is_refused(statement):
    with pytest.raises(ValueError):
        native_placeholders(statement)


def test_a_long_statement_runs_with_named_values_in_any_order(db):
    """Longer than psycopg's 4 KB parse cache: the statements this exists for."""
    padding = "-- " + "x" * 5000 + "\n"
    with prepared_cursor() as cursor:
        row = cursor.execute(padding + "SELECT %(b)s::int - %(a)s::int, %(a)s::int", {"a": 1, "b": 5}).fetchone()
    assert row == (4, 1)
