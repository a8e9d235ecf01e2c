"""The outbox relay to RabbitMQ (AMQP 0-9-1) with publisher confirms. Needs AMQP_URL (set by .ci/run)."""

import io
import uuid
from urllib.parse import urlsplit, urlunsplit

import pika
import pytest
from django.core.management import call_command

from processing.models import OutboxEvent
from processing.relay.brokers import AmqpBroker
from processing.relay.consumer import AmqpSubscriber, DuplicateFilter
from processing.relay.relay import OutboxRelay
from tests.processing.relay.conftest import emit, events_received, make_due

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def exchange(amqp_url):
    name = f"quire.test.{uuid.uuid4().hex[:12]}"
    yield name
    connection = pika.BlockingConnection(pika.URLParameters(amqp_url))
    channel = connection.channel()
    channel.exchange_delete(name)
    connection.close()


@pytest.fixture
def subscriber(amqp_url, exchange):
    consumer = AmqpSubscriber(amqp_url, exchange=exchange)
    yield consumer
    consumer.close()


def test_events_are_published_with_confirms_and_consumed(amqp_url, exchange, subscriber):
    event = emit(kind="document.version.searchable", version_id="v-9")

    result = OutboxRelay(AmqpBroker(amqp_url, exchange=exchange)).run_once()

    assert (result.published, result.failed) == (1, 0)
    [received] = events_received(subscriber, 1, DuplicateFilter())
    assert (received.event_id, received.kind, received.body["version_id"]) == (
        str(event.event_id),
        "document.version.searchable",
        "v-9",
    )
    event.refresh_from_db()
    assert event.dispatched_at is not None


def test_a_publish_to_a_missing_exchange_is_not_recorded_as_dispatched(amqp_url):
    event = emit()
    missing = f"quire.missing.{uuid.uuid4().hex[:12]}"

    result = OutboxRelay(AmqpBroker(amqp_url, exchange=missing, declare=False)).run_once()

    assert (result.published, result.failed) == (0, 1)
    event.refresh_from_db()
    assert event.dispatched_at is None and "NOT_FOUND" in event.last_error


def test_an_unroutable_publish_is_not_recorded_as_dispatched(amqp_url, exchange):
    event = emit()  # the exchange exists, but no queue is bound to it: the broker would drop the message

    result = OutboxRelay(AmqpBroker(amqp_url, exchange=exchange, queue="")).run_once()

    assert result.failed == 1
    event.refresh_from_db()
    assert event.dispatched_at is None and "Unroutable" in event.last_error


def test_while_rabbitmq_is_unreachable_the_event_waits_and_is_published_when_it_returns(amqp_url, exchange, subscriber):
    event = emit()
    unreachable = _on_port(amqp_url, 1)  # nothing listens on port 1: the connection is refused

    assert OutboxRelay(AmqpBroker(unreachable, exchange=exchange)).run_once().failed == 1
    event.refresh_from_db()
    assert event.dispatched_at is None and event.attempts == 1

    make_due(event)
    assert OutboxRelay(AmqpBroker(amqp_url, exchange=exchange)).run_once().published == 1
    assert [item.event_id for item in events_received(subscriber, 1, DuplicateFilter())] == [str(event.event_id)]


def _on_port(url: str, port: int) -> str:
    """``url`` with the same credentials, host and virtual host, on ``port``."""
    parts = urlsplit(url)
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    credentials = parts.netloc.rpartition("@")[0]
    return urlunsplit(parts._replace(netloc=f"{credentials}@{host}:{port}" if credentials else f"{host}:{port}"))


class _Crash(BaseException):
    """The relay process dies here."""


def test_a_crash_after_the_broker_confirmed_republishes_the_same_event_id(monkeypatch, amqp_url, exchange, subscriber):
    event = emit()
    crashing = OutboxRelay(AmqpBroker(amqp_url, exchange=exchange))
    monkeypatch.setattr(crashing, "record_dispatched", lambda ids: (_ for _ in ()).throw(_Crash()))
    with pytest.raises(_Crash):
        crashing.run_once()
    crashing.broker.close()

    make_due(event)
    assert OutboxRelay(AmqpBroker(amqp_url, exchange=exchange)).run_once().published == 1

    received = events_received(subscriber, 2, DuplicateFilter())
    assert [(item.event_id, item.duplicate) for item in received] == [
        (str(event.event_id), False),
        (str(event.event_id), True),
    ]
    assert OutboxEvent.objects.get(pk=event.pk).dispatched_at is not None


def test_outbox_tail_prints_events_from_a_durable_queue(amqp_url, exchange, settings):
    queue = f"{exchange}.events"
    settings.OUTBOX_AMQP_EXCHANGE = exchange
    first, second = emit(), emit(kind="processing.job.failed", job_id="j-7")
    OutboxRelay(AmqpBroker(amqp_url, exchange=exchange, queue=queue)).run_once()
    output = io.StringIO()

    try:
        call_command(
            "outbox_tail", "--broker-url", amqp_url, "--queue", queue, "--count", "2", "--timeout", "10", stdout=output
        )
    finally:
        connection = pika.BlockingConnection(pika.URLParameters(amqp_url))
        connection.channel().queue_delete(queue)
        connection.close()

    lines = output.getvalue().splitlines()
    assert [line.split()[1] for line in lines] == ["document.version.accepted", "processing.job.failed"]
    assert f"event_id={first.event_id}" in lines[0] and f"event_id={second.event_id}" in lines[1]
    assert "job_id=j-7" in lines[1]
