"""A QuerySet compiled by the ORM once per shape, then run through foundation's prepared cursor with each
call's values: the claim's statements (processing/queue/claims.py, claim_writes.py), where compiling cost
more than running."""

import re
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass

import psycopg
import psycopg.sql
from django.db import connection, transaction
from django.db.models import QuerySet

from foundation.database.prepared import prepared_cursor, statements_connection


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
