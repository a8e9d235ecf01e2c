"""Waking idle workers: a NOTIFY on the queue's channel when a job becomes claimable.

Sent inside the transaction that queues the job, so PostgreSQL delivers it only if that commits.
"""

from django.db import connection

QUEUE_CHANNEL = "quire_processing_queue"


def queue_notify(operation: str) -> None:
    """NOTIFY idle workers; PostgreSQL delivers it only if the enclosing transaction commits."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [QUEUE_CHANNEL, operation])
