"""Connections that must reach PostgreSQL itself: a LISTEN lives in its session, which a transaction pooler
(PgBouncer in transaction mode) does not keep, and so does a prepared statement. With ``DATABASE_DIRECT_URL``
set, settings add the database alias ``direct`` for them; otherwise they use Django's default database like
everything else.

The prepared statements that run outside any transaction, and the claim's transaction of its own
(foundation/database/prepared.py), go to a pool of ``direct`` connections each process keeps
(``DATABASE_DIRECT_POOL_SIZE``, 4 by default; 0 sends them through the pooler unprepared instead): planned
anew on every call, the statements of a job cost PostgreSQL about 4 ms of a core more (docs/deployment.md)."""

from django.db import DEFAULT_DB_ALIAS, connections

DIRECT = "direct"
_DJANGOS_OWN = ("cursor_factory", "context", "prepare_threshold")  # Django's cursor tuning and prepares


def psycopg_params(alias: str = DEFAULT_DB_ALIAS) -> dict:
    """psycopg keywords for a connection of its own to the alias's database: host, credentials and options
    (TLS, timeouts) as configured, without Django's cursor tuning."""
    params = connections[alias].get_connection_params()
    return {key: value for key, value in params.items() if key not in _DJANGOS_OWN}


def direct_connection_params() -> dict:
    """For a connection that LISTENs: PostgreSQL itself."""
    return psycopg_params(DIRECT if DIRECT in connections.settings else DEFAULT_DB_ALIAS)
