"""A running job's cancel wakes its worker: the session's cancellation long-poll answers the moment it commits."""

import json
import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from processing.models import ProcessingJob, WorkerSession
from processing.queue.cancellation import job_cancel, job_cancel_by_operator
from processing.queue.wakeups import CANCELLATION_CHANNEL, wakeups
from tests.concurrency import run_together
from tests.processing.worker_calls import (
    ECHO,
    PREFIX,
    claim_the_next_job,
    queue_echo_jobs,
    session_with_one_echo_slot,
    worker_client,
)
from tests.waiting import wait_until

LONG_WAIT = 20


@pytest.fixture(autouse=True)
def echo_deployment(configure_deployment):
    configure_deployment(operations=[ECHO], limits={"running_jobs_per_requester": 10, "running_jobs_per_project": 10})


def poll(session_id: str, **body):
    """The cancellation long-poll as an agent sends it: no request id, it changes nothing."""
    return worker_client().generic(
        "POST", f"{PREFIX}/sessions/{session_id}/cancellations", json.dumps(body), content_type="application/json"
    )


def running_claims(owner, count: int) -> list[tuple[str, str, str]]:
    """``count`` running echo jobs, each claimed by a session of its own: (job id, session id, claim id)."""
    jobs = queue_echo_jobs(owner, count)
    held = []
    for job_id in jobs:
        session_id = session_with_one_echo_slot()
        held.append((job_id, session_id, claim_the_next_job(session_id)["claim_id"]))
    return held


class Canceller(threading.Thread):
    """Calls ``then`` on a thread of its own (and connection) once a poll of ``session_id`` waits; ``finish()``
    joins it and re-raises what ``then`` raised, so a cancellation that failed cannot pass for one that woke
    no one."""

    def __init__(self, session_id: str, then):
        super().__init__(daemon=True)
        self.session_id, self.then, self.error = session_id, then, None

    def run(self):
        try:
            while not wakeups.is_watched(self.session_id, CANCELLATION_CHANNEL):
                time.sleep(0.01)
            time.sleep(0.3)  # past its first read: from here on only a wake-up answers it early
            self.then()
        except BaseException as error:  # handed to the test by finish()
            self.error = error
        finally:
            connection.close()

    def finish(self) -> None:
        self.join(timeout=LONG_WAIT)
        assert not self.is_alive(), "the canceller did not finish"
        if self.error is not None:
            raise self.error


def _when_waiting(session_id: str, then) -> Canceller:
    canceller = Canceller(session_id, then)
    canceller.start()
    return canceller


@pytest.mark.django_db
def test_a_poll_answers_at_once_with_the_claims_whose_cancellation_was_requested(owner):
    (cancelled_job, session_id, claim_id), (_, other_session, _) = running_claims(owner, 2)
    job_cancel(actor_id=owner.pk, job_id=cancelled_job)

    started = time.monotonic()
    response = poll(session_id, wait_seconds=LONG_WAIT)

    assert (response.status_code, response.json()) == (200, {"claim_ids": [claim_id]})
    assert time.monotonic() - started < LONG_WAIT / 2
    assert poll(other_session, wait_seconds=0).json() == {"claim_ids": []}, "another session's claim is not listed"


@pytest.mark.django_db(transaction=True)
def test_a_waiting_poll_is_woken_by_the_cancellation_as_it_commits(owner):
    [(job_id, session_id, claim_id)] = running_claims(owner, 1)
    canceller = _when_waiting(session_id, lambda: job_cancel(actor_id=owner.pk, job_id=job_id))

    started = time.monotonic()
    response = poll(session_id, wait_seconds=LONG_WAIT)
    answered_after = time.monotonic() - started
    canceller.finish()

    assert response.json() == {"claim_ids": [claim_id]}
    assert 0.3 <= answered_after < 5, f"answered after {answered_after:.2f} s of a {LONG_WAIT} s wait"


def _timed_poll(session_id: str) -> tuple[dict, float]:
    started = time.monotonic()
    return poll(session_id, wait_seconds=LONG_WAIT).json(), time.monotonic() - started


@pytest.mark.django_db(transaction=True)
def test_a_cancellation_committed_as_a_poll_begins_is_never_missed(owner):
    wakeups.generation()  # starts the listener: without it every wait would end within a second anyway
    wait_until(lambda: wakeups.connected)
    for job_id, session_id, claim_id in running_claims(owner, 10):
        answers = []
        errors = run_together(
            lambda session_id=session_id, answers=answers: answers.append(_timed_poll(session_id)),
            lambda job_id=job_id: job_cancel(actor_id=owner.pk, job_id=job_id),
        )

        assert not errors, errors
        [(body, seconds)] = answers
        assert body == {"claim_ids": [claim_id]}
        assert seconds < LONG_WAIT / 4, "the poll slept through a cancellation committed as it began"


@pytest.mark.django_db(transaction=True)
def test_a_cancellation_rolled_back_wakes_no_one_and_another_sessions_neither(owner):
    (job_id, session_id, _), (other_job, _, _) = running_claims(owner, 2)

    def cancel_then_roll_back():
        job_cancel_by_operator(job_id=other_job)  # another session's claim: its NOTIFY names that session
        with transaction.atomic():
            job_cancel_by_operator(job_id=job_id)
            transaction.set_rollback(True)

    canceller = _when_waiting(session_id, cancel_then_roll_back)
    started = time.monotonic()
    response = poll(session_id, wait_seconds=1.5)
    canceller.finish()

    assert response.json() == {"claim_ids": []}
    assert time.monotonic() - started >= 1.5, "woken without a cancellation of its own"
    assert not ProcessingJob.objects.get(pk=job_id).cancellation_requested


@pytest.mark.django_db(transaction=True)
def test_claims_the_agent_already_stops_do_not_end_the_wait(owner):
    [(job_id, session_id, claim_id)] = running_claims(owner, 1)
    job_cancel(actor_id=owner.pk, job_id=job_id)

    started = time.monotonic()
    response = poll(session_id, wait_seconds=0.5, known_claim_ids=[claim_id])

    assert response.json() == {"claim_ids": [claim_id]}, "listed again, but only once the wait ran out"
    assert time.monotonic() - started >= 0.5


@pytest.mark.django_db(transaction=True)
def test_a_waiting_poll_holds_no_database_connection(owner):
    [(job_id, session_id, _)] = running_claims(owner, 1)
    requests_connection = connections["default"]  # this thread's, which serves the poll below
    seen = {}

    def look_then_cancel():
        deadline = time.monotonic() + 5
        while requests_connection.connection is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        seen["open"] = requests_connection.connection is not None
        job_cancel(actor_id=owner.pk, job_id=job_id)

    canceller = _when_waiting(session_id, look_then_cancel)
    poll(session_id, wait_seconds=LONG_WAIT)
    canceller.finish()

    assert seen == {"open": False}


@pytest.mark.django_db
def test_a_poll_of_a_session_that_ended_says_session_gone(owner):
    [(_, session_id, _)] = running_claims(owner, 1)
    WorkerSession.objects.filter(pk=session_id).update(expires_at=timezone.now() - timedelta(hours=1))

    response = poll(session_id, wait_seconds=0)

    assert (response.status_code, response.json()["error"]["code"]) == (409, "session_gone")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [{"wait_seconds": 26}, {"wait_seconds": -1}, {"known_claim_ids": ["not-a-uuid"]}, {"known_claim_ids": "x"}],
)
def test_an_impossible_poll_is_422(owner, body):
    [(_, session_id, _)] = running_claims(owner, 1)

    response = poll(session_id, **body)

    assert (response.status_code, response.json()["error"]["code"]) == (422, "protocol_invalid")
