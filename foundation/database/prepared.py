"""Hand-written statements that PostgreSQL plans once per connection instead of on every call.

Django binds parameters on the client (psycopg's ``ClientCursor``) and never prepares, so
PostgreSQL parses and plans each statement anew. For the few statements every job runs
(claims, staging, delivery, finalization's read, the terminal commit, the permission
check) planning cost about as much as executing: measured at service level, preparing
them cut the database's share of a job by about a third.

``prepared_cursor`` gives a server-binding psycopg cursor on Django's own connection
(same transaction, same adapters) whose statements are prepared on first use (psycopg
honours that only when the connection has a ``prepare_threshold``: see settings), and
turns driver errors into Django's as a Django cursor does. Placeholders are psycopg's
(``%s`` or ``%(name)s``); a parameter's type must be clear from where it is used. They are turned into
PostgreSQL's own (``$1``) once per statement text and the statement is sent through psycopg's
``RawCursor``: psycopg parses a statement's placeholders on every execution when its text is longer than
4 KB (it caches only shorter ones), and the claim's and the delivery's are longer; that parse cost about
0.2 ms a claim.

The claim's statements are written with the ORM and compiled once per process
(processing/queue/prepared_query.py), then sent here. psycopg forgets a connection's prepared statements
when a transaction on it rolls back.

Django's stock alternative, ``OPTIONS["server_side_binding"]`` with psycopg's ``prepare_threshold``, was
measured against this in one run (three interleaved runs each, issue 44): on one server it drained 14 % fewer
jobs over HTTP with 2 agents (85.6 against 99.4 jobs/s) with 13 % slower pickups; through the cluster's
PgBouncer, which before 1.21 keeps no prepared statement in transaction mode, it prepares nothing, and drained
19 % fewer jobs (54.0 against 66.4) with 55 % slower pickups. So this stays.

Behind a transaction pooler nothing stays prepared on Django's default connection: there, a statement outside
any transaction, and the claim's transaction of its own (``statements_lent``), run on a connection to
PostgreSQL itself that a small pool lends them (foundation/database/direct.py).
"""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache

import psycopg
from django.db import connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper

from foundation.database.direct import DIRECT


class PreparedCursor:
    def __init__(self, cursor: psycopg.RawCursor):
        self._cursor = cursor

    def execute(self, sql: str, params=None) -> "PreparedCursor":
        native, names = native_placeholders(sql)
        if isinstance(params, dict):
            params = [params[name] for name in names]
        elif names:
            raise TypeError("named placeholders need a dict of parameters")
        self._cursor.execute(native, params, prepare=True)
        return self

    def fetchone(self):
        return self._cursor.fetchone()

    def fetchall(self) -> list:
        return self._cursor.fetchall()


_LENT: ContextVar[tuple[psycopg.Connection, BaseDatabaseWrapper] | None] = ContextVar("prepared_lent", default=None)


def _lender() -> BaseDatabaseWrapper | None:
    """The database whose pool lends connections to PostgreSQL itself: ``direct`` when requests go through a
    transaction pooler (and ``DATABASE_DIRECT_POOL_SIZE`` is not 0), else none."""
    if DIRECT not in connections.settings or not connections.settings[DIRECT]["OPTIONS"].get("pool"):
        return None
    return connections[DIRECT]


def autocommitting() -> bool:
    """Whether Django's default connection is outside any transaction: each statement on it would commit on
    its own, so it may as well run on another connection. Without connecting it."""
    return not connection.in_atomic_block and (connection.connection is None or connection.autocommit)


@contextmanager
def statements_lent():
    """Inside, ``prepared_cursor`` and ``PreparedQuery.rows`` run on a connection to PostgreSQL itself lent by
    this process's small pool of them when requests go through a transaction pooler, on which nothing stays
    prepared (foundation/database/direct.py); otherwise on Django's default connection. For a transaction of its
    own, which the caller opens and ends with statements sent on it: the claim's. The connection goes back at
    the end, before an acquire's long poll waits."""
    direct = _lender()
    if direct is None or _LENT.get() is not None:
        yield
        return
    # Django's errors, as from any query: a pool that lends nothing in time is the database out of reach (503).
    with direct.wrap_database_errors:
        direct.pool.open()  # once per process, as Django opens its pools on first use
        with direct.pool.connection() as lent:
            token = _LENT.set((lent, direct))
            try:
                yield
            finally:
                _LENT.reset(token)


def statements_connection() -> psycopg.Connection:
    """The psycopg connection prepared statements run on here: Django's default one outside ``statements_lent``."""
    if (lent := _LENT.get()) is not None:
        return lent[0]
    connection.ensure_connection()
    return connection.connection


@contextmanager
def prepared_cursor() -> Iterator[PreparedCursor]:
    """A cursor whose statements are prepared. Outside any transaction, behind a transaction pooler, on a lent
    connection to PostgreSQL itself, for this statement: a statement that commits on its own runs the same on
    any connection, and there it stays prepared."""
    if autocommitting():  # statements_lent lends only behind a pooler, and not twice
        with statements_lent(), _cursor() as cursor:
            yield cursor
    else:
        with _cursor() as cursor:
            yield cursor


@contextmanager
def _cursor() -> Iterator[PreparedCursor]:
    on = statements_connection()
    lent = _LENT.get()
    with (lent[1] if lent else connection).wrap_database_errors, psycopg.RawCursor(on) as cursor:
        yield PreparedCursor(cursor)


_PSYCOPG_PLACEHOLDER = re.compile(r"%%|%\((\w+)\)s|%s|%")


@lru_cache(maxsize=512)
def native_placeholders(sql: str) -> tuple[str, tuple[str, ...]]:
    """``sql`` with psycopg's placeholders as PostgreSQL's (``$1``, ``$2``…; ``%%`` as ``%``), and for named ones
    the name each number stands for (one number per name, however often it appears). Positional and named
    placeholders do not mix in one statement, as in psycopg."""
    names: list[str] = []
    positional = 0

    def native(match: re.Match) -> str:
        nonlocal positional
        placeholder = match.group(0)
        if placeholder == "%%":
            return "%"
        if placeholder == "%":
            raise ValueError(f"a lone % in a statement: {sql[:80]!r}")
        if (name := match.group(1)) is None:
            positional += 1
            return f"${positional}"
        if name not in names:
            names.append(name)
        return f"${names.index(name) + 1}"

    converted = _PSYCOPG_PLACEHOLDER.sub(native, sql)
    if positional and names:
        raise ValueError("positional and named placeholders in one statement")
    return converted, tuple(names)
