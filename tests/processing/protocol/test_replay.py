"""Replay's lock is held only while a request runs and its answer is sent, however the request ends (real
database, second connection)."""

import json
import logging

import pytest

from processing.advisory import advisory_key
from processing.exceptions import RequestIdReused
from processing.models import WorkerRequest
from processing.protocol.replay import replay_run
from tests.concurrency import separate_connection

REQUEST_ID = "replay-lock-1"
PAYLOAD = json.dumps({"request_id": REQUEST_ID}).encode()


def lock_is_free() -> bool:
    """Whether another connection can take the request's lock right now (and gives it straight back)."""
    key = advisory_key("worker-request", f"pool:{REQUEST_ID}")
    with separate_connection(autocommit=True) as other:
        taken = other.execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()[0]
        if taken:
            other.execute("SELECT pg_advisory_unlock(%s)", [key])
    return taken


def run(handler, route="sessions", payload=PAYLOAD):
    """One request whose answer is sent: the ASGI handler closes a replayed response after sending it."""
    response = replay_run(identity="pool", route=route, raw_payload=payload, handler=handler)
    response.close()
    return response


@pytest.mark.django_db(transaction=True)
def test_the_lock_is_held_while_the_handler_runs_and_free_after():
    seen_during = []

    def handler():
        seen_during.append(lock_is_free())
        return 201, {"ok": True}

    response = run(handler)
    assert response.status_code == 201
    assert seen_during == [False]
    assert lock_is_free()
    assert WorkerRequest.objects.get(request_id=REQUEST_ID).response_status == 201


@pytest.mark.django_db(transaction=True)
def test_a_retry_is_answered_from_the_store_without_running_the_handler_and_frees_the_lock():
    first = run(lambda: (200, {"answer": 1}))
    retried = run(lambda: pytest.fail("a retry must not run the handler"))
    assert retried.content == first.content
    assert lock_is_free()


@pytest.mark.django_db(transaction=True)
def test_a_reused_id_with_another_payload_frees_the_lock():
    run(lambda: (200, {"answer": 1}))
    with pytest.raises(RequestIdReused):
        run(lambda: (200, {"answer": 2}), payload=json.dumps({"request_id": REQUEST_ID, "other": 1}).encode())
    assert lock_is_free()


@pytest.mark.django_db(transaction=True)
def test_a_crashing_handler_stores_nothing_and_frees_the_lock():
    def handler():
        raise RuntimeError("processor bug")

    with pytest.raises(RuntimeError):
        run(handler)
    assert lock_is_free()
    assert not WorkerRequest.objects.filter(request_id=REQUEST_ID).exists()


@pytest.mark.django_db(transaction=True)
def test_a_response_that_cannot_be_stored_still_frees_the_lock_and_is_logged(caplog):
    caplog.set_level(logging.ERROR, logger="processing.protocol.replay")
    # The route column holds 64 characters: this store fails inside the function, before its unlock.
    response = run(lambda: (200, {"answer": 1}), route="r" * 65)

    assert response.status_code == 200  # the answer was already sent when its store failed
    assert lock_is_free()
    assert not WorkerRequest.objects.filter(request_id=REQUEST_ID).exists()
    assert "storing the response of worker request replay-lock-1 of pool failed" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_the_answer_is_stored_and_the_lock_freed_when_it_has_been_sent_not_before():
    response = replay_run(identity="pool", route="sessions", raw_payload=PAYLOAD, handler=lambda: (201, {"a": 1}))

    # Between the answer and its close (while the ASGI handler sends it) a duplicate still meets the lock.
    assert not lock_is_free()
    assert not WorkerRequest.objects.filter(request_id=REQUEST_ID).exists()

    response.close()

    assert lock_is_free()
    assert bytes(WorkerRequest.objects.get(request_id=REQUEST_ID).response_body) == response.content
