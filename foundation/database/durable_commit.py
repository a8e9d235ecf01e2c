"""An accepted job survives a crash of PostgreSQL only if its commit was flushed: ``synchronous_commit``.

With ``synchronous_commit = off`` a commit returns before its WAL reaches the disk, and a crash of the
database server loses the last moments of accepted submissions, claims and outcomes that clients were
already told about. Core therefore refuses to start on such a database (``durable_commit_required``,
called by the server at start), unless the operator accepts the loss explicitly with
``QUIRE_ALLOW_ASYNC_COMMIT=true``; ``manage.py check --database default`` reports it too. ``local`` and the
replication levels flush locally and are accepted: what a local commit cannot survive is the loss of the
server's disk, a boundary the README states.
"""

import logging

from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.db import connection

from foundation.env import env

logger = logging.getLogger(__name__)

CHECK_ID = "quire.E001"


def commit_is_durable() -> bool:
    with connection.cursor() as cursor:
        return cursor.execute("SHOW synchronous_commit").fetchone()[0] != "off"


def _problem() -> str:
    return (
        "PostgreSQL's synchronous_commit is off for Quire's database: a crash of the database server would lose "
        "commits clients were already told about. Turn it on, or set QUIRE_ALLOW_ASYNC_COMMIT=true to accept that."
    )


def durable_commit_required() -> None:
    """At a server's start: refuse a database without durable commits, unless explicitly allowed."""
    if commit_is_durable():
        return
    if env("QUIRE_ALLOW_ASYNC_COMMIT"):
        logger.error("starting without durable commits: %s", _problem())
        return
    raise ImproperlyConfigured(_problem())


def check_durable_commit(app_configs=None, databases=None, **kwargs) -> list[checks.CheckMessage]:
    if not databases or "default" not in databases or commit_is_durable() or env("QUIRE_ALLOW_ASYNC_COMMIT"):
        return []
    return [checks.Error(_problem(), id=CHECK_ID)]
