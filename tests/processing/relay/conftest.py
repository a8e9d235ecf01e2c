import os
import uuid

import pytest
from django.db import connection, transaction

from processing.kernel.outbox import outbox_emit
from processing.relay.brokers import BrokerOutcome


@pytest.fixture
def amqp_url():
    url = os.environ.get("AMQP_URL")
    if not url:
        pytest.skip("AMQP_URL is not set: no RabbitMQ to publish to (`make test` finds or starts one and sets it)")
    return url


@pytest.fixture
def channel_name():
    """A NOTIFY channel of this test's own."""
    return f"quire_outbox_test_{uuid.uuid4().hex[:12]}"


def emit(kind: str = "document.version.accepted", **payload):
    with transaction.atomic():
        return outbox_emit(kind=kind, payload={"document_id": str(uuid.uuid4()), **payload})


def make_due(*events) -> None:
    """Let time pass for these events: their claim lease or backoff is over."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE processing_outboxevent SET available_at = now() - interval '1 second' WHERE id = ANY(%s)",
            [[event.pk for event in events]],
        )


class MemoryBroker:
    """The in-memory twin: records what it was given, confirms all of it (or nothing while ``down``)."""

    name = "memory"

    def __init__(self):
        self.published: list = []
        self.down = False

    def publish(self, messages):
        if self.down:
            return BrokerOutcome([], "memory broker is down")
        self.published.extend(messages)
        return BrokerOutcome([message.row_id for message in messages])

    def close(self):
        pass


def events_received(subscriber, count: int, duplicates) -> list:
    """The first ``count`` events the subscriber delivers within 10 s (fewer if they do not come)."""
    from processing.relay.consumer import events

    got = []
    for event in events(subscriber, timeout=10, duplicates=duplicates):
        got.append(event)
        if len(got) == count:
            break
    return got
