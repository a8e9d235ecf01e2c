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

``PreparedQuery`` does the same for a statement written with the ORM: compiled once per
process, prepared once per connection (the claim's, processing/queue/claims.py). psycopg
forgets a connection's prepared statements when a transaction on it rolls back.

Behind a transaction pooler nothing stays prepared on Django's default connection: there, a statement outside
any transaction, and the claim's transaction of its own (``statements_lent``), run on a connection to
PostgreSQL itself that a small pool lends them (foundation/database/direct.py).
"""

import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache

import psycopg
import psycopg.sql
from django.db import connection, connections, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import QuerySet

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


class PreparedQuery:
    """A QuerySet compiled by the ORM once per shape, then run as a prepared statement with each call's values.

    Building and compiling a QuerySet costs far more than running it when the statement is small and hot
    (the claim's: about 5 ms of Python against 1 ms in the database), and Django cannot prepare what it
    compiles (ticket #20516: its SQL inlines values as parameters it binds on the client). ``build`` is
    called with *stand-ins* for the named values: each a value of the real one's type that no query holds.
    Compiled, each parameter that is a stand-in becomes a slot the call's value fills; any other parameter
    is a constant of the query. Lists are values too (an ``__in``), one stand-in per element, so their
    lengths are part of the shape; so are the ``literals``, which the SQL holds as text (a slice's LIMIT).
    Rows come back as the database sends them: no ``from_db_value`` (a jsonb is text).
    """

    def __init__(self, build: Callable[..., QuerySet]):
        self._build = build
        self._compiled: dict[tuple, tuple[str, list]] = {}

    def rows(self, *, literals: tuple = (), before=(), around: str = "", after=(), **values) -> list[tuple]:
        """The rows for these values. ``before``, statements without parameters, run first, sent with the
        query in one round trip (a pipeline). ``around`` is a statement that reads the query's rows as
        ``{query}`` and whose own parameters, ``after``, follow the query's."""
        sql, params = self.statement(literals=literals, around=around, after=after, **values)
        with prepared_cursor() as cursor:
            if not before:
                return cursor.execute(sql, params).fetchall()
            # Fetched once the pipeline has ended: a fetch inside it would send a Sync of its own, and the
            # pipeline's end another, a round trip more.
            with statements_connection().pipeline():
                for statement in before:
                    cursor.execute(statement)
                cursor.execute(sql, params)
            return cursor.fetchall()

    def statement(self, *, literals: tuple = (), around: str = "", after=(), **values) -> tuple[str, list]:
        """The statement ``rows`` runs and its positional parameters, to be sent by a caller of its own (in a
        pipeline with statements that need the transaction it runs in)."""
        sql, slots = self._compiled_for(literals, values)
        params = [slot.filled(values) for slot in slots] + list(after)
        return (around.replace("{query}", sql) if around else sql), params

    def named(self, prefix: str, *, literals: tuple = (), **values) -> tuple[str, dict]:
        """The query's SQL with named placeholders (``%(<prefix>_<n>)s``) and their values, to be embedded in a
        statement of one's own that names its parameters."""
        sql, slots = self._compiled_for(literals, values)
        names = iter(range(len(slots)))
        named_sql = _PLACEHOLDER.sub(lambda m: m.group(0) if m.group(0) == "%%" else f"%({prefix}_{next(names)})s", sql)
        return named_sql, {f"{prefix}_{n}": slot.filled(values) for n, slot in enumerate(slots)}

    def _compiled_for(self, literals: tuple, values: dict) -> tuple[str, list]:
        shape = (literals, *((name, len(v) if isinstance(v, list) else -1) for name, v in sorted(values.items())))
        if (compiled := self._compiled.get(shape)) is None:
            compiled = self._compiled[shape] = self._compile(literals, values)
        return compiled

    def _compile(self, literals: tuple, values: dict) -> tuple[str, list]:
        stand_ins: dict = {}

        def stand_in(name: str, index: int, value):
            fake = _stand_in_for(value, len(stand_ins))
            stand_ins[_identity(fake)] = _Slot(name, index)
            return fake

        faked = {
            name: [stand_in(name, i, item) for i, item in enumerate(value)]
            if isinstance(value, list)
            else stand_in(name, -1, value)
            for name, value in values.items()
        }
        query = self._build(*literals, **faked).query
        # Django compiles a FOR UPDATE only inside a transaction, which compiling does not need (and a caller
        # may compile before it opens one: the claim's BEGIN goes with the candidates' statement).
        with transaction.atomic() if query.select_for_update else nullcontext():
            sql, params = query.sql_with_params()
        slots = [_slot_of(param, stand_ins) for param in params]
        missing = set(stand_ins.values()) - {slot.named() for slot in slots}
        if missing:
            raise ValueError(f"the query does not use {sorted({slot.name for slot in missing})} as given")
        return _constants_inlined(sql, slots), [slot for slot in slots if slot.name]


def _constants_inlined(sql: str, slots: list["_Slot"]) -> str:
    """``sql`` with each constant's placeholder replaced by the constant as a literal: a generic plan can then
    use a partial index whose predicate names it (``state = 'queued'``), which it cannot prove of ``$1``."""
    connection.ensure_connection()  # renders the literals
    parts, slot_of = [], iter(slots)
    for part in _PLACEHOLDER.split(sql):
        if part == "%s":
            slot = next(slot_of)
            part = part if slot.name else psycopg.sql.Literal(slot.value).as_string(connection.connection)
            part = part.replace("%", "%%") if slot.name == "" else part
        parts.append(part)
    return "".join(parts)


_PLACEHOLDER = re.compile(r"(%%|%s)")


@dataclass(frozen=True)
class _Slot:
    name: str  # "" for a constant of the query
    index: int = -1  # the element of a list value, or -1
    value: object = None  # the constant
    wrap: type | None = None  # the type Django gave the parameter (psycopg's Int4 for an integer column)

    def filled(self, values: dict):
        if not self.name:
            return self.value
        value = values[self.name] if self.index < 0 else values[self.name][self.index]
        return self.wrap(value) if self.wrap is not None else value

    def named(self) -> "_Slot":
        return _Slot(self.name, self.index)


def _identity(value) -> tuple:
    """What a stand-in is recognized by once compiled: Django may wrap an int (in psycopg's Int4, say)."""
    return ("int", int(value)) if isinstance(value, int) else (type(value), value)


def _slot_of(param, stand_ins: dict) -> _Slot:
    slot = stand_ins.get(_identity(param))
    if slot is None:
        return _Slot("", value=param)
    return _Slot(slot.name, slot.index, wrap=type(param) if isinstance(param, int) and type(param) is not int else None)


def _stand_in_for(value, n: int):
    """A value of ``value``'s type that no query of ours holds (and that fits the column it is compared with)."""
    if isinstance(value, uuid.UUID):
        return uuid.UUID(int=(0xF1A7 << 112) + n)
    if isinstance(value, bool):
        raise TypeError("a bool has no stand-in: make it a literal")
    if isinstance(value, int):
        return 2_000_000_000 + n  # within an integer column's range, which Django checks
    if isinstance(value, str):
        return f"\x1fstand-in {n}"
    raise TypeError(f"no stand-in for a {type(value).__name__}")
