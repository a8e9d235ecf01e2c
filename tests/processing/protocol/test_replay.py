"""A request in progress is held against duplicates only while it runs and its answer is sent, however it
ends; a request whose process died is taken over once its hold runs out (real database, other connections)."""

import hashlib
import json
import logging
import threading

import psycopg
import pytest

from foundation.database.direct import direct_connection_params
from processing.exceptions import RequestIdReused, RequestInProgress
from processing.models import WorkerRequest
from processing.protocol import replay
from processing.protocol.replay import replay_run
from tests.concurrency import run_together, separate_connection
from tests.waiting import wait_until

REQUEST_ID = "replay-held-1"
PAYLOAD = json.dumps({"request_id": REQUEST_ID}).encode()
pytestmark = pytest.mark.django_db(transaction=True)


def a_duplicate_meets() -> str:
    """What a duplicate of the request arriving right now, on another connection, would meet: ``held`` (it is
    told to retry), ``stored`` (it gets the stored answer) or ``nothing`` (it would run; its row is let go)."""
    digest = hashlib.sha256(b"sessions\0" + PAYLOAD).hexdigest()
    with separate_connection(autocommit=True) as other:
        row = other.execute(
            "SELECT * FROM processing_replay_begin(%s, %s, %s, %s, %s, NULL, NULL)",
            ["pool", REQUEST_ID, "sessions", digest, 5.0],
        ).fetchone()
        if row[0]:
            other.execute("SELECT processing_replay_end(false, %s, %s, 0, ''::bytea, 0)", ["pool", REQUEST_ID])
            return "nothing"
    return "stored" if row[2] is not None else "held"


def run(handler, route="sessions", payload=PAYLOAD):
    """One request whose answer is sent: the server closes a replayed response after sending it."""
    response = replay_run(identity="pool", route=route, raw_payload=payload, handler=handler)
    response.close()
    return response


def test_a_duplicate_is_held_off_while_the_handler_runs_and_answered_from_the_store_after():
    seen_during = []

    def handler():
        seen_during.append(a_duplicate_meets())
        return 201, {"ok": True}

    response = run(handler)

    assert response.status_code == 201
    assert seen_during == ["held"]
    assert a_duplicate_meets() == "stored"
    assert WorkerRequest.objects.get(request_id=REQUEST_ID).response_status == 201


def test_a_retry_is_answered_from_the_store_without_running_the_handler():
    first = run(lambda: (200, {"answer": 1}))
    retried = run(lambda: pytest.fail("a retry must not run the handler"))
    assert retried.content == first.content


def test_a_reused_id_with_another_payload_is_refused_and_while_its_request_runs_held_off():
    other_payload = json.dumps({"request_id": REQUEST_ID, "other": 1}).encode()
    held_off = []

    def handler():
        with pytest.raises(RequestInProgress):
            run(lambda: pytest.fail("a duplicate must not run"), payload=other_payload)
        held_off.append(True)
        return 200, {"answer": 1}

    run(handler)
    with pytest.raises(RequestIdReused):
        run(lambda: (200, {"answer": 2}), payload=other_payload)
    assert held_off == [True]


def test_a_crashing_handler_stores_nothing_and_lets_the_request_go():
    def handler():
        raise RuntimeError("processor bug")

    with pytest.raises(RuntimeError):
        run(handler)
    assert a_duplicate_meets() == "nothing"
    assert not WorkerRequest.objects.filter(request_id=REQUEST_ID).exists()


def test_a_5xx_is_not_stored_and_its_retry_runs_again():
    assert run(lambda: (503, {"error": "later"})).status_code == 503
    assert run(lambda: (200, {"answer": 1})).status_code == 200


def test_a_response_that_cannot_be_stored_is_logged_and_its_retry_runs_once_the_hold_ran_out(caplog, monkeypatch):
    caplog.set_level(logging.ERROR, logger="processing.protocol.replay")
    monkeypatch.setattr(replay, "KEEP_SECONDS", 2**40)  # no interval PostgreSQL can add: the store fails
    monkeypatch.setattr(replay, "HOLD_SECONDS", 0.0)

    response = run(lambda: (200, {"answer": 1}))

    assert response.status_code == 200  # the answer was already sent when its store failed
    assert "storing the response of worker request replay-held-1 of pool failed" in caplog.text
    monkeypatch.undo()
    assert run(lambda: (200, {"answer": 2})).content == b'{"answer":2}'


def test_the_answer_is_stored_when_it_has_been_sent_not_before():
    response = replay_run(identity="pool", route="sessions", raw_payload=PAYLOAD, handler=lambda: (201, {"a": 1}))

    # Between the answer and its close (while the server sends it) a duplicate is still held off.
    assert a_duplicate_meets() == "held"
    assert WorkerRequest.objects.get(request_id=REQUEST_ID).response_status is None

    response.close()

    assert a_duplicate_meets() == "stored"
    assert bytes(WorkerRequest.objects.get(request_id=REQUEST_ID).response_body) == response.content


def test_a_request_whose_process_died_holds_its_retries_off_until_its_hold_runs_out(monkeypatch):
    # The process dies after running the handler and before storing: its response is never closed.
    monkeypatch.setattr(replay, "HOLD_SECONDS", 0.0)
    replay_run(identity="pool", route="sessions", raw_payload=PAYLOAD, handler=lambda: (201, {"died": True}))
    monkeypatch.undo()

    retried = run(lambda: (201, {"ran": "again"}))

    assert retried.content == b'{"ran":"again"}'
    assert a_duplicate_meets() == "stored"


def test_a_retry_within_the_hold_of_a_dead_request_is_told_to_retry():
    replay_run(identity="pool", route="sessions", raw_payload=PAYLOAD, handler=lambda: (201, {"died": True}))

    with pytest.raises(RequestInProgress):
        run(lambda: pytest.fail("the hold has not run out"))


def test_a_long_poll_is_held_for_its_wait_as_well():
    replay_run(identity="pool", route="sessions", raw_payload=PAYLOAD, handler=lambda: (200, {}), wait_seconds=20)

    held = WorkerRequest.objects.get(request_id=REQUEST_ID)

    assert (held.expires_at - held.created_at).total_seconds() == pytest.approx(replay.HOLD_SECONDS + 20)


def test_of_two_duplicates_at_the_same_moment_one_runs_and_the_other_is_told_to_retry():
    ran, outcomes, release = [], [], threading.Event()

    def request():
        def handler():
            ran.append(True)
            release.wait(timeout=10)  # still running when the duplicate arrives
            return 200, {"answer": 1}

        try:
            outcomes.append(run(handler).status_code)
        except RequestInProgress:
            outcomes.append(409)
            release.set()

    errors = run_together(request, request)

    assert errors == []
    assert ran == [True]
    assert sorted(outcomes) == [200, 409]


def a_request_held_by(holder) -> int:
    """The request's row, held for a minute by the process whose listening connection is ``holder``; its pid."""
    pid, started = holder.execute(
        "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
    ).fetchone()
    digest = hashlib.sha256(b"sessions\0" + PAYLOAD).hexdigest()
    with separate_connection(autocommit=True) as other:
        other.execute(
            "SELECT * FROM processing_replay_begin(%s, %s, %s, %s, %s, %s, %s)",
            ["pool", REQUEST_ID, "sessions", digest, 60.0, pid, started],
        )
    return pid


def backend_gone(pid: int) -> bool:
    with separate_connection(autocommit=True) as other:
        return other.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()[0] == 0


def listening_connection():
    """A connection like a process's listener: to PostgreSQL itself (behind a pooler, a pooled client's backend
    would outlive the client)."""
    return psycopg.connect(**direct_connection_params(), autocommit=True)


def test_a_request_whose_holder_is_alive_holds_its_retries_off():
    with listening_connection() as holder:
        a_request_held_by(holder)

        with pytest.raises(RequestInProgress):
            run(lambda: pytest.fail("its holder is alive and within its hold"))


def test_a_request_whose_holders_process_is_gone_is_taken_over_before_its_hold_runs_out():
    with listening_connection() as holder:
        pid = a_request_held_by(holder)
    # The holder's connection closed with its process; PostgreSQL's backend leaves pg_stat_activity.
    wait_until(lambda: backend_gone(pid), what="the holder's backend to leave")

    retried = run(lambda: (201, {"ran": "again"}))

    assert retried.content == b'{"ran":"again"}'
