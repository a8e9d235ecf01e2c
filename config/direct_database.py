"""Connections that must reach PostgreSQL itself: a LISTEN lives in its session, which a transaction pooler
(PgBouncer in transaction mode) does not keep. With ``DATABASE_DIRECT_URL`` set, settings add the database
alias ``direct`` for them; otherwise they use Django's default database like everything else."""

from django.db import DEFAULT_DB_ALIAS, connections

DIRECT = "direct"
_DJANGOS_OWN = ("cursor_factory", "context", "prepare_threshold")  # Django's cursor tuning and prepares


def direct_connection_params() -> dict:
    """psycopg keywords for a connection of its own to PostgreSQL: the alias's host, credentials and options
    (TLS, timeouts) as configured, without Django's cursor tuning."""
    alias = DIRECT if DIRECT in connections.settings else DEFAULT_DB_ALIAS
    params = connections[alias].get_connection_params()
    return {key: value for key, value in params.items() if key not in _DJANGOS_OWN}
