"""A database connection cut under one test is not handed to the next (tests/conftest.py)."""

import psycopg
import pytest
from django.db import connection
from django.db.utils import OperationalError

from foundation.database.direct import psycopg_params

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_connection_cut_under_a_test_is_closed_before_its_flush():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with psycopg.connect(**psycopg_params(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])

    with pytest.raises(OperationalError), connection.cursor() as cursor:
        cursor.execute("SELECT 1")

    assert connection.connection.broken


def test_the_next_test_gets_a_working_connection():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)
