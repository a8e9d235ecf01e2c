"""An operator pauses an operation and drains a worker session, with a real server and a real agent."""

import signal
import time

import pytest

from operators.models import OperatorAction
from processing.models import (
    AttemptState,
    JobState,
    ProcessingAttempt,
    SessionState,
    WorkerRequest,
    WorkerSession,
)
from processing.queue.pauses import operation_pause, operation_resume
from processing.ui.task_center import task_row_for
from processing.upkeep.fleet import session_drain_by_operator
from processing.upkeep.reapers import sweep
from tests.operators.factories import operator_user
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.test_faults import ECHO, _echo_job, _state
from tests.processing.sweeps import SWEEP_DATABASES
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True, databases=SWEEP_DATABASES)


def _live_session(name: str) -> WorkerSession:
    return wait_until(
        lambda: WorkerSession.objects.filter(instance=name, state=SessionState.ACTIVE).first(),
        what=f"agent {name} to register",
    )


def test_a_job_submitted_while_paused_waits_saying_so_and_runs_after_resume(owner, protocol_server):
    operator = operator_user(acting=True)
    with running_agent(protocol_server.url, protocol_server.root, name="paused-echo"):
        _live_session("paused-echo")
        assert operation_pause(actor=operator, operation=ECHO)

        job_id = _echo_job(owner, key="while-paused")
        time.sleep(3)  # an idle agent long-polling for echo jobs is woken by the submission and claims nothing

        assert _state(job_id) == JobState.QUEUED
        assert "paused" in task_row_for(user_id=owner.pk, job_id=job_id).phase_text
        assert operation_resume(actor=operator, operation=ECHO)
        wait_until(lambda: _state(job_id) == JobState.SUCCEEDED, timeout=30, what="the job to run after resume")

    assert list(OperatorAction.objects.order_by("id").values_list("action", "subject", "actor_name")) == [
        ("pause", ECHO, operator.username),
        ("resume", ECHO, operator.username),
    ]


def test_a_drained_session_finishes_its_running_job_takes_nothing_new_and_ends(owner, protocol_server):
    operator = operator_user(acting=True)
    with running_agent(protocol_server.url, protocol_server.root, name="drained") as agent:
        session = _live_session("drained")
        running_job = _echo_job(owner, steering={"echo-delay.txt": "1:4"}, key="long")
        wait_until(lambda: _state(running_job) == JobState.RUNNING, what="the agent to claim the job")

        assert session_drain_by_operator(actor=operator, session_id=session.pk)
        later_job = _echo_job(owner, key="after-drain")

        wait_until(lambda: _state(running_job) == JobState.SUCCEEDED, timeout=30, what="the running job to finish")
        agent.wait(timeout=30)  # told by its heartbeat, the agent stops claiming, finishes, and exits by itself
        assert agent.returncode == 0
    sweep()

    assert ProcessingAttempt.objects.get(job_id=running_job).state == AttemptState.DELIVERED
    assert ProcessingAttempt.objects.filter(session_id=session.pk).count() == 1, "nothing new was claimed"
    assert _state(later_job) == JobState.QUEUED
    assert WorkerSession.objects.get(pk=session.pk).state == SessionState.CLOSED
    drain = OperatorAction.objects.get(action="drain")
    assert drain.outcome == {"running attempts left to finish": 1}


def test_a_session_draining_on_sigterm_is_closed_once_its_jobs_are_done(owner, protocol_server):
    with running_agent(protocol_server.url, protocol_server.root, name="terminated") as agent:
        session = _live_session("terminated")
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)

    assert WorkerSession.objects.get(pk=session.pk).state == SessionState.DRAINING
    assert sweep().counts["drained_sessions_closed"] == 1
    assert WorkerSession.objects.get(pk=session.pk).state == SessionState.CLOSED


def test_an_idle_agent_stops_on_sigterm_without_waiting_out_its_long_poll(owner, protocol_server):
    """Its claim loop waits on a 20-second long-poll (the protocol's longest); the drain ends it at once (Core
    answers a draining session's long-poll with nothing), so the agent exits well before the long-poll would
    have returned by itself."""
    with running_agent(
        protocol_server.url, protocol_server.root, "--acquire-wait", "20", name="idle-terminated"
    ) as agent:
        session = _live_session("idle-terminated")
        waiting = WorkerRequest.objects.filter(route=f"sessions/{session.pk}/acquire", response_status__isnull=True)
        wait_until(waiting.exists, what="the agent's long-poll to be waiting")
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=10)  # half the long-poll: waiting it out would take about 20 s

    assert agent.returncode == 0
    assert WorkerSession.objects.get(pk=session.pk).state == SessionState.DRAINING
