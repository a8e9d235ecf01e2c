"""Where the outbox relay publishes: PostgreSQL NOTIFY (default) or AMQP 0-9-1 with publisher confirms.

A broker's ``publish`` returns which messages the broker *confirmed*; the
relay records only those as dispatched. For NOTIFY, confirmation is the
commit of the transaction that issued ``pg_notify`` (PostgreSQL queues
notifications at commit, and a failed commit delivers none). For AMQP it is
the broker's ack in confirm mode; messages are published ``mandatory`` so an
unroutable one comes back as an error instead of vanishing, and a publish to
a missing exchange closes the channel — neither is ever counted as sent.

``OUTBOX_BROKER_URL`` selects: empty → NOTIFY on Quire's own database;
``postgresql://…`` → NOTIFY on that database; ``amqp://…`` / ``amqps://…`` → RabbitMQ.
"""

import json
import logging
from dataclasses import dataclass, field
from typing import Protocol

from django.conf import settings

from foundation.database.direct import psycopg_params

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT_SECONDS = 5


@dataclass(frozen=True)
class EventMessage:
    """One outbox row as it travels: ids only, plus the stable ``event_id``."""

    row_id: int
    event_id: str
    kind: str
    body: bytes


@dataclass
class BrokerOutcome:
    confirmed: list[int] = field(default_factory=list)
    error: str | None = None


class Broker(Protocol):
    name: str

    def publish(self, messages: list[EventMessage]) -> BrokerOutcome: ...

    def close(self) -> None: ...


def quire_conninfo() -> dict:
    """psycopg connection keywords for Quire's own database (whatever Django is connected to, through a pooler
    or not: a NOTIFY is sent in a transaction)."""
    return psycopg_params()


class NotifyBroker:
    """``pg_notify(channel, body)`` for each message, in one transaction per batch on its own connection."""

    name = "notify"

    def __init__(self, conninfo: str | dict, *, channel: str):
        self.conninfo, self.channel, self._connection = conninfo, channel, None

    def _connect(self):
        import psycopg

        if self._connection is None or self._connection.closed:
            options = {"conninfo": self.conninfo} if isinstance(self.conninfo, str) else dict(self.conninfo)
            self._connection = psycopg.connect(**options, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
        return self._connection

    def publish(self, messages: list[EventMessage]) -> BrokerOutcome:
        import psycopg

        try:
            conn = self._connect()
            with conn.transaction():
                for message in messages:
                    conn.execute("SELECT pg_notify(%s, %s)", [self.channel, message.body.decode("utf-8")])
        except psycopg.Error as exc:
            self.close()
            return BrokerOutcome([], f"{type(exc).__name__}: {exc}"[:1000])
        return BrokerOutcome([message.row_id for message in messages])

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


class AmqpBroker:
    """A topic exchange (routing key = event kind), persistent messages, publisher confirms."""

    name = "amqp"

    def __init__(self, url: str, *, exchange: str, queue: str = "", declare: bool = True):
        self.url, self.exchange, self.queue, self.declare = url, exchange, queue, declare
        self._connection = self._channel = None

    def _open_channel(self):
        import pika

        if self._channel is not None and self._channel.is_open:
            return self._channel
        self.close()
        parameters = pika.URLParameters(self.url)
        parameters.socket_timeout = parameters.blocked_connection_timeout = CONNECT_TIMEOUT_SECONDS
        parameters.connection_attempts = 1
        self._connection = pika.BlockingConnection(parameters)
        channel = self._connection.channel()
        channel.confirm_delivery()
        if self.declare:
            amqp_topology_declare(channel, exchange=self.exchange, queue=self.queue)
        self._channel = channel
        return channel

    def publish(self, messages: list[EventMessage]) -> BrokerOutcome:
        import pika
        from pika.exceptions import AMQPError

        outcome = BrokerOutcome()
        try:
            channel = self._open_channel()
            for message in messages:
                properties = pika.BasicProperties(
                    message_id=message.event_id, type=message.kind, content_type="application/json", delivery_mode=2
                )
                # Blocks until the broker acks (confirm mode); raises on nack, return or a closed channel.
                channel.basic_publish(self.exchange, message.kind, message.body, properties, mandatory=True)
                outcome.confirmed.append(message.row_id)
        except (AMQPError, OSError) as exc:
            self.close()
            outcome.error = f"{type(exc).__name__}: {exc}"[:1000]
        return outcome

    def close(self) -> None:
        connection_, self._connection, self._channel = self._connection, None, None
        if connection_ is not None and connection_.is_open:
            try:
                connection_.close()
            except Exception:  # closing a broken connection may fail too; it is gone either way
                logger.debug("closing the AMQP connection failed", exc_info=True)


def amqp_topology_declare(channel, *, exchange: str, queue: str) -> None:
    """The durable topic exchange and, when named, a durable queue bound to every event kind."""
    channel.exchange_declare(exchange=exchange, exchange_type="topic", durable=True)
    if queue:
        channel.queue_declare(queue=queue, durable=True)
        channel.queue_bind(queue=queue, exchange=exchange, routing_key="#")


def is_amqp(url: str) -> bool:
    return url.startswith(("amqp://", "amqps://"))


def broker_from_url(url: str | None = None) -> Broker:
    url = settings.OUTBOX_BROKER_URL if url is None else url
    if is_amqp(url):
        return AmqpBroker(url, exchange=settings.OUTBOX_AMQP_EXCHANGE, queue=settings.OUTBOX_AMQP_QUEUE)
    if url.startswith(("postgresql://", "postgres://")):
        return NotifyBroker(url, channel=settings.OUTBOX_NOTIFY_CHANNEL)
    if url:
        raise ValueError("OUTBOX_BROKER_URL is empty (NOTIFY on Quire's database), postgresql://… or amqp://…")
    return NotifyBroker(quire_conninfo(), channel=settings.OUTBOX_NOTIFY_CHANNEL)


def message_body(*, kind: str, payload: dict, created_at) -> bytes:
    return json.dumps({**payload, "kind": kind, "created_at": created_at.isoformat()}, sort_keys=True).encode()
