"""The outbox relay: publish committed events, record progress only after the broker confirms.

One pass:

1. **claim** — in one short transaction, take up to ``batch`` pending events
   that are due (``FOR UPDATE SKIP LOCKED``), push their ``available_at`` a
   claim lease ahead and count the attempt; commit. Replicas skip each other's
   rows, and a relay that dies holding a claim only delays those events until
   the lease passes.
2. **publish** — outside any transaction, hand the messages to the broker.
3. **record** — mark exactly the confirmed events dispatched; give the others
   their error and a backoff (exponential with jitter, capped).

Delivery is at least once: a crash between confirm and record republishes the
same ``event_id`` after the lease, and consumers recognise the duplicate.
"""

import json
import logging
import select
import threading
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from prometheus_client import Counter

from foundation.database.direct import direct_connection_params
from processing.kernel.outbox import WAKEUP_CHANNEL
from processing.relay.brokers import Broker, EventMessage, message_body

logger = logging.getLogger(__name__)

published_total = Counter("quire_outbox_published_total", "Outbox events confirmed by the broker.", ["broker"])
publish_failures_total = Counter(
    "quire_outbox_publish_failures_total", "Outbox events a publish attempt failed for.", ["broker"]
)
BACKOFF_BASE_SECONDS = 1.0

_CLAIM_SQL = """
    WITH due AS (
        SELECT id FROM processing_outboxevent
        WHERE dispatched_at IS NULL AND available_at <= now()
        ORDER BY available_at, id
        LIMIT %(batch)s
        FOR UPDATE SKIP LOCKED
    )
    UPDATE processing_outboxevent AS event
    SET available_at = now() + make_interval(secs => %(lease)s), attempts = event.attempts + 1
    FROM due WHERE event.id = due.id
    RETURNING event.id, event.event_id, event.kind, event.payload, event.created_at
"""
_DISPATCHED_SQL = """
    UPDATE processing_outboxevent SET dispatched_at = now(), last_error = ''
    WHERE id = ANY(%(ids)s) AND dispatched_at IS NULL
"""
_FAILED_SQL = """
    UPDATE processing_outboxevent
    SET last_error = %(error)s,
        available_at = now() + make_interval(
            secs => least(%(cap)s, %(base)s * power(2, least(attempts, 30) - 1)) * (0.5 + random() / 2))
    WHERE id = ANY(%(ids)s) AND dispatched_at IS NULL
"""


@dataclass(frozen=True)
class RelayPass:
    claimed: int
    published: int
    failed: int


class OutboxRelay:
    def __init__(
        self,
        broker: Broker,
        *,
        batch: int | None = None,
        claim_seconds: int | None = None,
        backoff_max_seconds: int | None = None,
    ):
        self.broker = broker
        self.batch = batch or settings.OUTBOX_RELAY_BATCH
        self.claim_seconds = claim_seconds or settings.OUTBOX_CLAIM_SECONDS
        self.backoff_max_seconds = backoff_max_seconds or settings.OUTBOX_BACKOFF_MAX_SECONDS

    def claim(self) -> list[EventMessage]:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_CLAIM_SQL, {"batch": self.batch, "lease": self.claim_seconds})
            rows = sorted(cursor.fetchall())
        # Django's cursor hands jsonb back as text.
        return [
            EventMessage(
                row_id, str(event_id), kind, message_body(kind=kind, payload=json.loads(payload), created_at=created)
            )
            for row_id, event_id, kind, payload, created in rows
        ]

    def record_dispatched(self, ids: list[int]) -> None:
        with connection.cursor() as cursor:
            cursor.execute(_DISPATCHED_SQL, {"ids": ids})

    def record_failed(self, ids: list[int], error: str) -> None:
        params = {"ids": ids, "error": error, "cap": self.backoff_max_seconds, "base": BACKOFF_BASE_SECONDS}
        with connection.cursor() as cursor:
            cursor.execute(_FAILED_SQL, params)

    def run_once(self) -> RelayPass:
        """Claim, publish, record. Never raises for a broker failure: the events stay pending."""
        messages = self.claim()
        if not messages:
            return RelayPass(0, 0, 0)
        outcome = self.broker.publish(messages)
        confirmed = set(outcome.confirmed)
        if confirmed:
            self.record_dispatched(sorted(confirmed))
            published_total.labels(broker=self.broker.name).inc(len(confirmed))
        failed = [message.row_id for message in messages if message.row_id not in confirmed]
        if failed:
            self.record_failed(failed, outcome.error or "not confirmed by the broker")
            publish_failures_total.labels(broker=self.broker.name).inc(len(failed))
            logger.warning(
                "outbox publish failed; events kept for another attempt",
                extra={"broker": self.broker.name, "events": len(failed), "error": (outcome.error or "")[:200]},
            )
        return RelayPass(len(messages), len(confirmed), len(failed))

    def run(self, *, stop: threading.Event, idle_seconds: float = 1.0) -> None:
        """Relay until ``stop`` is set; an idle relay waits for an emit's wake-up or ``idle_seconds``."""
        with Wakeups() as wakeups:
            while not stop.is_set():
                try:
                    result = self.run_once()
                except Exception:  # the database may be restarting; keep the relay alive
                    logger.exception("outbox relay pass failed")
                    connection.close()
                    result = RelayPass(0, 0, 1)
                if result.claimed < self.batch:
                    wakeups.wait(idle_seconds if result.failed == 0 else min(idle_seconds * 5, 5.0))
        self.broker.close()


class Wakeups:
    """LISTEN for ``outbox_emit``'s wake-ups on a connection of its own (polling still covers a lost one)."""

    def __init__(self):
        self._connection = None

    def __enter__(self):
        import psycopg

        try:
            self._connection = psycopg.connect(**direct_connection_params(), autocommit=True)
            self._connection.execute(f"LISTEN {WAKEUP_CHANNEL}")
        except psycopg.Error:
            logger.warning("cannot LISTEN for outbox wake-ups; polling only", exc_info=True)
            self._connection = None
        return self

    def wait(self, seconds: float) -> None:
        if self._connection is None:
            threading.Event().wait(seconds)
            return
        try:
            if select.select([self._connection.fileno()], [], [], seconds)[0]:
                list(self._connection.notifies(timeout=0))
        except Exception:  # a broken listener falls back to polling
            logger.warning("outbox wake-up listener failed; polling only", exc_info=True)
            self._connection.close()
            self._connection = None

    def __exit__(self, *exc_info):
        if self._connection is not None:
            self._connection.close()
