"""Emitting outbox events: always inside the transaction that made the fact true."""

import json
import uuid

from django.db import connection, transaction
from django.utils import timezone

from processing.models import OutboxEvent

# Relays LISTEN here; PostgreSQL delivers the wake-up only if the emitting transaction commits.
WAKEUP_CHANNEL = "quire_outbox_pending"


def outbox_emit(*, kind: str, payload: dict) -> OutboxEvent:
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("outbox events are written inside the transaction that makes them true")
    now = timezone.now()
    event = OutboxEvent(kind=kind, payload=payload, created_at=now, available_at=now)
    event.payload = _with_event_id(payload, event.event_id)
    event.save()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, '')", [WAKEUP_CHANNEL])
    return event


def outbox_insert_sql(*, kind: str, payload: dict, now, rows_from: str) -> tuple[str, list]:
    """An ``INSERT … SELECT … FROM <rows_from>`` of the event, for a caller that writes the fact and its
    event in one statement (a CTE named ``rows_from`` yields one row when the fact was made, none when not).
    The caller NOTIFYs ``WAKEUP_CHANNEL`` in that statement too."""
    event_id = uuid.uuid4()
    table = OutboxEvent._meta.db_table
    columns = "event_id, kind, payload, created_at, available_at, dispatched_at, attempts, last_error"
    # The table is the model's, ``rows_from`` the caller's CTE name; every value is a parameter.
    sql = f"INSERT INTO {table} ({columns}) SELECT %s, %s, %s::jsonb, %s, %s, NULL, 0, '' FROM {rows_from}"  # noqa: S608
    return sql, [event_id, kind, json.dumps(_with_event_id(payload, event_id)), now, now]


def _with_event_id(payload: dict, event_id: uuid.UUID) -> dict:
    """Consumers recognise a redelivered event by the id its payload carries."""
    return {**payload, "event_id": str(event_id)}
