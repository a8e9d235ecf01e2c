"""Database time: ``now()`` of the transaction is the authority for every lease and deadline decision."""

from datetime import datetime

from django.db import connection
from django.db.models.expressions import RawSQL

# The transaction's now() as an expression, so a query can carry it instead of a round trip of its own.
TRANSACTION_NOW = RawSQL("now()", [])


def db_now() -> datetime:
    """The transaction's ``now()``: the authority for every lease decision."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]
