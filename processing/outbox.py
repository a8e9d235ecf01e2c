"""Emitting outbox events: always inside the transaction that made the fact true."""

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
    event.payload = {**payload, "event_id": str(event.event_id)}
    event.save()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, '')", [WAKEUP_CHANNEL])
    return event
