"""Draining a worker session, and the maintenance loop ending drained sessions: a session is never ended
while it holds a running attempt, even when a claim is in flight as the operator drains it."""

import threading

import pytest
from django.db import connection, transaction

from processing.models import AttemptState, ProcessingAttempt, SessionState, WorkerSession
from processing.queue.claims import claim_acquire
from processing.upkeep.fleet import drained_sessions_close, session_drain_by_operator
from tests.concurrency import backend_waiting_on_lock
from tests.operators.factories import operator_user
from tests.processing import worker_calls as worker
from tests.processing.factories import WorkerSessionFactory
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)  # the claim, the drain and the close are other connections

ECHO = "test.echo/v1"


def _session_state(session) -> str:
    return WorkerSession.objects.values_list("state", flat=True).get(pk=session.pk)


def test_a_drained_session_without_running_attempts_ends_and_an_active_one_stays(owner):
    drained, active = WorkerSessionFactory(processors={ECHO: 1}), WorkerSessionFactory(processors={ECHO: 1})
    assert session_drain_by_operator(actor=operator_user(acting=True), session_id=drained.pk)

    assert drained_sessions_close() == 1
    assert (_session_state(drained), _session_state(active)) == (SessionState.CLOSED, SessionState.ACTIVE)


def test_a_claim_in_flight_as_the_session_drains_keeps_it_open_until_its_attempt_ends(owner):
    session = WorkerSessionFactory(processors={ECHO: 1})
    worker.queue_echo_jobs(owner, 1)
    claimed, commit = threading.Event(), threading.Event()
    closer_pid, closed = [], []

    def claim_in_flight():
        # The claim's own transaction, held open after its attempt is written: it read the session as active.
        with transaction.atomic():
            assert claim_acquire(session_id=session.pk, offers={ECHO: 1}) is not None
            claimed.set()
            assert commit.wait(timeout=20)
        connection.close()

    def close_step():
        closer_pid.append(_pid())
        closed.append(drained_sessions_close())
        connection.close()

    claimer = threading.Thread(target=claim_in_flight)
    claimer.start()
    assert claimed.wait(timeout=20)
    assert session_drain_by_operator(actor=operator_user(acting=True), session_id=session.pk)
    closer = threading.Thread(target=close_step)
    closer.start()
    wait_until(lambda: closed or (closer_pid and backend_waiting_on_lock(closer_pid[0])), timeout=10, what="the close")
    commit.set()
    claimer.join(timeout=20)
    closer.join(timeout=20)

    assert closed == [0], "the session still holds the claim's running attempt"
    assert _session_state(session) == SessionState.DRAINING
    ProcessingAttempt.objects.filter(session=session).update(state=AttemptState.DELIVERED)
    assert drained_sessions_close() == 1
    assert _session_state(session) == SessionState.CLOSED


def _pid() -> int:
    connection.ensure_connection()
    return connection.connection.info.backend_pid
