"""The outbox relay to PostgreSQL NOTIFY: confirm-then-record, backoff, crash windows, several replicas."""

import threading

import pytest
from django.db import connection

from processing.models import OutboxEvent
from processing.relay.brokers import NotifyBroker, quire_conninfo
from processing.relay.consumer import DuplicateFilter, NotifySubscriber
from processing.relay.relay import OutboxRelay
from tests.concurrency import run_together
from tests.processing.relay.conftest import MemoryBroker, emit, events_received, make_due

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def subscriber(channel_name):
    listener = NotifySubscriber(channel=channel_name)
    yield listener
    listener.close()


def test_committed_events_are_published_and_then_marked_dispatched(channel_name, subscriber):
    first, second = emit(), emit(kind="processing.job.succeeded", job_id="j-1")
    relay = OutboxRelay(NotifyBroker(quire_conninfo(), channel=channel_name))

    result = relay.run_once()

    assert (result.claimed, result.published, result.failed) == (2, 2, 0)
    received = events_received(subscriber, 2, DuplicateFilter())
    assert [event.event_id for event in received] == [str(first.event_id), str(second.event_id)]
    assert received[1].kind == "processing.job.succeeded" and received[1].body["job_id"] == "j-1"
    assert not OutboxEvent.objects.filter(dispatched_at__isnull=True).exists()


def test_an_uncommitted_event_is_not_seen_by_the_relay():
    from django.db import transaction

    relay = OutboxRelay(MemoryBroker())
    with transaction.atomic():
        emit()
        seen_inside = _other_connection_claims(relay)

    assert seen_inside == 0
    assert relay.run_once().published == 1


def _other_connection_claims(relay) -> int:
    result = []
    thread = threading.Thread(target=lambda: (result.append(relay.run_once().claimed), connection.close()))
    thread.start()
    thread.join(30)
    return result[0]


def test_while_the_broker_is_down_the_event_stays_pending_and_is_published_when_it_returns(channel_name, subscriber):
    event = emit()
    down = OutboxRelay(NotifyBroker("postgresql://quire@127.0.0.1:1/nowhere", channel=channel_name))

    assert down.run_once().failed == 1
    event.refresh_from_db()
    assert (event.dispatched_at, event.attempts) == (None, 1) and event.last_error
    back = OutboxRelay(NotifyBroker(quire_conninfo(), channel=channel_name))
    assert back.run_once().claimed == 0, "the failed event waits out its backoff"

    make_due(event)
    assert back.run_once().published == 1

    assert [received.event_id for received in events_received(subscriber, 1, DuplicateFilter())] == [
        str(event.event_id)
    ]
    event.refresh_from_db()
    assert event.dispatched_at is not None and event.attempts == 2


class _Crash(BaseException):
    """The relay process dies here."""


def test_a_crash_after_the_confirm_republishes_the_same_event_id_and_the_consumer_sees_a_duplicate(
    monkeypatch, channel_name, subscriber
):
    event = emit()
    crashing = OutboxRelay(NotifyBroker(quire_conninfo(), channel=channel_name))

    def crash(ids):
        raise _Crash()

    monkeypatch.setattr(crashing, "record_dispatched", crash)
    with pytest.raises(_Crash):
        crashing.run_once()
    crashing.broker.close()
    event.refresh_from_db()
    assert event.dispatched_at is None, "confirmed by the broker, but the crash came before recording"

    make_due(event)  # the dead relay's claim lease passes
    assert OutboxRelay(NotifyBroker(quire_conninfo(), channel=channel_name)).run_once().published == 1

    received = events_received(subscriber, 2, DuplicateFilter())
    assert [item.event_id for item in received] == [str(event.event_id)] * 2
    assert [item.duplicate for item in received] == [False, True]


def test_several_relays_publish_every_event_exactly_once_when_nothing_fails():
    emitted = {str(emit().event_id) for _ in range(120)}
    brokers = [MemoryBroker() for _ in range(3)]

    def drain(broker):
        def run():
            relay = OutboxRelay(broker, batch=7)
            while relay.run_once().claimed:
                pass

        return run

    assert run_together(*[drain(broker) for broker in brokers]) == []

    published = [message.event_id for broker in brokers for message in broker.published]
    assert sorted(published) == sorted(emitted)
    assert not OutboxEvent.objects.filter(dispatched_at__isnull=True).exists()


def test_backoff_grows_with_each_failed_attempt_up_to_its_cap():
    event = emit()
    broker = MemoryBroker()
    broker.down = True
    relay = OutboxRelay(broker, backoff_max_seconds=4)
    delays = []
    for _ in range(5):
        make_due(event)
        relay.run_once()
        with connection.cursor() as cursor:
            cursor.execute("SELECT extract(epoch FROM available_at - now()) FROM processing_outboxevent")
            delays.append(float(cursor.fetchone()[0]))

    # base 1 s doubling, with jitter between half and all of it, capped at 4 s
    for attempt, delay in enumerate(delays, start=1):
        ceiling = min(4, 2 ** (attempt - 1))
        assert ceiling / 2 - 0.1 <= delay <= ceiling + 0.1, (attempt, delays)
