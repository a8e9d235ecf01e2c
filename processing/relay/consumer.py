"""A small consumer of published outbox events, for operators (``manage.py outbox_tail``) and tests.

Delivery is at least once, so a consumer keeps the ``event_id``s it has seen
(a bounded memory here; a real consumer keeps them with its own state) and
recognises a redelivery as a duplicate instead of acting twice.
"""

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings

from foundation.database.direct import direct_connection_params
from processing.relay.brokers import CONNECT_TIMEOUT_SECONDS, amqp_topology_declare, is_amqp


@dataclass(frozen=True)
class ReceivedEvent:
    event_id: str
    kind: str
    body: dict
    duplicate: bool

    def line(self) -> str:
        ids = " ".join(
            f"{key}={value}"
            for key, value in sorted(self.body.items())
            if key not in ("event_id", "kind", "created_at")
        )
        mark = "  [duplicate]" if self.duplicate else ""
        return f"{self.body.get('created_at', '')} {self.kind} event_id={self.event_id} {ids}{mark}"


class DuplicateFilter:
    """Remembers the last ``capacity`` event ids."""

    def __init__(self, capacity: int = 100_000):
        self.capacity, self._seen = capacity, OrderedDict()

    def seen_before(self, event_id: str) -> bool:
        if event_id in self._seen:
            self._seen.move_to_end(event_id)
            return True
        self._seen[event_id] = None
        if len(self._seen) > self.capacity:
            self._seen.popitem(last=False)
        return False


def event_parse(raw: bytes | str, duplicates: DuplicateFilter) -> ReceivedEvent:
    body = json.loads(raw)
    event_id = str(body.get("event_id", ""))
    return ReceivedEvent(event_id, str(body.get("kind", "")), body, duplicates.seen_before(event_id))


class NotifySubscriber:
    """LISTEN on the outbox channel. NOTIFY reaches only listeners connected when it is committed."""

    def __init__(self, conninfo: str | dict | None = None, *, channel: str | None = None):
        import psycopg

        options = {"conninfo": conninfo} if isinstance(conninfo, str) else dict(conninfo or direct_connection_params())
        self.connection = psycopg.connect(**{**options, "connect_timeout": CONNECT_TIMEOUT_SECONDS}, autocommit=True)
        self.connection.execute(f'LISTEN "{channel or settings.OUTBOX_NOTIFY_CHANNEL}"')

    def raw_events(self, *, timeout: float | None) -> Iterator[str]:
        for notification in self.connection.notifies(timeout=timeout):
            yield notification.payload

    def close(self) -> None:
        self.connection.close()


class AmqpSubscriber:
    """Consume the exchange through a private, exclusive queue bound to every kind (or a named queue)."""

    def __init__(self, url: str, *, exchange: str | None = None, queue: str = ""):
        import pika

        self.connection = pika.BlockingConnection(pika.URLParameters(url))
        self.channel = self.connection.channel()
        exchange = exchange or settings.OUTBOX_AMQP_EXCHANGE
        amqp_topology_declare(self.channel, exchange=exchange, queue="")
        if not queue:
            queue = self.channel.queue_declare(queue="", exclusive=True, auto_delete=True).method.queue
            self.channel.queue_bind(queue=queue, exchange=exchange, routing_key="#")
        self.queue = queue

    def raw_events(self, *, timeout: float | None) -> Iterator[bytes]:
        for method, _, body in self.channel.consume(self.queue, inactivity_timeout=timeout):
            if method is None:
                return
            self.channel.basic_ack(method.delivery_tag)
            yield body

    def close(self) -> None:
        if self.connection.is_open:
            self.connection.close()


def subscriber_from_url(url: str | None = None, *, queue: str = ""):
    url = settings.OUTBOX_BROKER_URL if url is None else url
    if is_amqp(url):
        return AmqpSubscriber(url, queue=queue)
    return NotifySubscriber(url or None)


def events(subscriber, *, timeout: float | None, duplicates: DuplicateFilter | None = None) -> Iterator[ReceivedEvent]:
    """Parsed events with duplicate recognition; stops after ``timeout`` seconds without one."""
    duplicates = duplicates or DuplicateFilter()
    for raw in subscriber.raw_events(timeout=timeout):
        yield event_parse(raw, duplicates)
