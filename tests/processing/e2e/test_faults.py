"""Faults with real processes: a killed agent, a late delivery, a crashed finalizer, a restarted database.

Lease and finalization boundaries are crossed by back-dating them in SQL, never by sleeping.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob, TerminalCommit, WorkerRequest
from processing.submission.submit import job_submit
from processing.upkeep.reapers import sweep
from tests.factories import ProjectFactory
from tests.live_server import database_environment_of_tests
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.conftest import FakeWorker
from tests.processing.sweeps import SWEEP_DATABASES
from tests.waiting import wait_until
from workspace import services as workspace_services

pytestmark = pytest.mark.django_db(transaction=True, databases=SWEEP_DATABASES)

ECHO = "test.echo/v1"
ROOT = Path(__file__).resolve().parents[3]


def _echo_job(owner, *, steering: dict[str, str] | None = None, key: str = "echo") -> str:
    project = ProjectFactory(owner=owner, starter=True)
    for path, content in (steering or {}).items():
        workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=content.encode())
    return str(job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key=key, project_id=project.pk).job_id)


def _state(job_id: str) -> str:
    return ProcessingJob.objects.values_list("state", flat=True).get(pk=job_id)


def _backdate_leases(job_id: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE processing_processingattempt SET lease_expires_at = now() - interval '1 second' "
            "WHERE job_id = %s AND state = 'running'",
            [job_id],
        )


def test_a_killed_agents_job_is_completed_by_another_after_lease_expiry(owner, protocol_server):
    job_id = _echo_job(owner, steering={"echo-delay.txt": "1:300"})
    with running_agent(protocol_server.url, protocol_server.root, name="doomed") as doomed:
        wait_until(lambda: _state(job_id) == JobState.RUNNING, what="the first agent to claim the job")
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait()

    _backdate_leases(job_id)
    assert sweep().counts["leases_lost"] == 1
    assert _state(job_id) == JobState.QUEUED

    with running_agent(protocol_server.url, protocol_server.root, "--max-jobs", "1", name="rescuer") as rescuer:
        wait_until(lambda: _state(job_id) == JobState.SUCCEEDED, what="the second agent to finish the job")
        rescuer.wait(timeout=30)

    attempts = list(ProcessingAttempt.objects.filter(job_id=job_id).order_by("number").values_list("number", "state"))
    assert attempts == [(1, AttemptState.LOST), (2, AttemptState.DELIVERED)]
    job = ProcessingJob.objects.get(pk=job_id)
    assert list(job.artifacts.values_list("role", flat=True)) == ["echo"]
    assert job.artifacts.get().source_attempt.number == 2


def test_an_expired_claims_late_delivery_is_refused_and_publishes_nothing(owner, protocol_server):
    job_id = _echo_job(owner)
    worker = FakeWorker(protocol_server.url)
    _, session, _ = worker.register({ECHO: 1})
    offers = {"offers": [{"operation": ECHO, "permits": 1}], "wait_seconds": 5}
    claim = worker.post(f"sessions/{session['session_id']}/acquire", offers)[1]["claim"]
    status, ticket, _ = worker.post(
        f"claims/{claim['claim_id']}/uploads",
        {
            "role": "echo",
            "media_type": "application/octet-stream",
            "filename": "e",
            "size": 2,
            "sha256": "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
        },
    )
    assert status == 201
    _backdate_leases(job_id)

    upload = worker.request(
        "PUT",
        ticket["url"],
        body=b"{}",
        headers={"X-Quire-Transfer-Secret": ticket["secret"], "Content-Type": "application/octet-stream"},
    )
    status, body, _ = worker.post(f"claims/{claim['claim_id']}/delivery", {})

    assert upload[0] == 409
    assert (status, body["error"]["code"]) == (409, "claim_lost")
    job = ProcessingJob.objects.get(pk=job_id)
    assert job.state == JobState.RUNNING and job.artifacts.count() == 0


def _maintain_once() -> subprocess.Popen:
    env = {
        **os.environ,
        **database_environment_of_tests(),
        "QUIRE_DEPLOYMENT_FILE": settings.QUIRE_DEPLOYMENT_FILE,
        "QUIRE_TEST_OPERATIONS": "true",
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "processing_maintain", "--once"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def test_a_crash_between_delivery_and_finalization_is_recovered_once(owner, protocol_server):
    from processing.queue.claims import claim_acquire
    from processing.queue.delivery import Diagnostics, delivery_accept
    from tests.processing.factories import WorkerSessionFactory
    from tests.processing.lifecycle import stage

    job_id = _echo_job(owner)
    session = WorkerSessionFactory(processors={ECHO: 1})
    claim = claim_acquire(session_id=session.pk, offers={ECHO: 1})
    stage(claim, "echo", "application/octet-stream", "echo.json", b"{}")
    delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())  # ... and the finalizer never runs
    assert _state(job_id) == JobState.FINALIZING
    ProcessingJob.objects.filter(pk=job_id).update(finalization_expires_at="2000-01-01T00:00:00Z")

    reapers = [_maintain_once(), _maintain_once()]
    outputs = [reaper.communicate(timeout=120)[0].decode() for reaper in reapers]

    assert [reaper.returncode for reaper in reapers] == [0, 0], outputs
    assert _state(job_id) == JobState.SUCCEEDED
    assert TerminalCommit.objects.filter(job_id=job_id).count() == 1
    assert ProcessingJob.objects.get(pk=job_id).artifacts.count() == 1


@pytest.mark.restarts_postgres
def test_an_agent_survives_a_database_restart_and_no_job_is_lost(owner, protocol_server):
    if os.environ.get("DATABASE_URL"):
        pytest.skip("restarts only the embedded PostgreSQL this checkout owns")
    from config.embedded_db import restart

    during = _echo_job(owner, steering={"echo-delay.txt": "*:2"}, key="during-restart")
    with running_agent(protocol_server.url, protocol_server.root, name="survivor"):
        wait_until(lambda: _state(during) == JobState.RUNNING, what="the job to start")
        connection.close()
        restart(ROOT / "var" / "pgdata")
        connection.close()
        wait_until(lambda: _state(during) == JobState.SUCCEEDED, timeout=90, what="the job to finish after restart")
        after = _echo_job(owner, key="after-restart")
        wait_until(lambda: _state(after) == JobState.SUCCEEDED, timeout=90, what="a new job after restart")


def test_a_frozen_worker_resumed_after_another_finished_publishes_nothing(owner, protocol_server):
    job_id = _echo_job(owner, steering={"echo-delay.txt": "1:2"}, key="frozen")
    root = protocol_server.root
    with running_agent(protocol_server.url, root, name="frozen") as frozen:
        wait_until(lambda: _state(job_id) == JobState.RUNNING, what="the first claim")
        os.kill(frozen.pid, signal.SIGSTOP)
        _backdate_leases(job_id)
        sweep()
        with running_agent(protocol_server.url, root, "--max-jobs", "1", name="thawed-rival") as rival:
            wait_until(lambda: _state(job_id) == JobState.SUCCEEDED, what="the second attempt to finish")
            rival.wait(timeout=30)
        os.kill(frozen.pid, signal.SIGCONT)
        wait_until(
            lambda: b"core refused" in (root / "frozen.log").read_bytes(), what="the resumed worker to be refused"
        )

    job = ProcessingJob.objects.get(pk=job_id)
    assert job.state == JobState.SUCCEEDED and job.artifacts.count() == 1
    assert job.artifacts.get().source_attempt.number == 2
    assert ProcessingAttempt.objects.get(job_id=job_id, number=1).state == AttemptState.LOST


def test_a_job_that_crashes_every_worker_fails_after_the_attempt_limit_while_others_flow(owner, protocol_server):
    poison = _echo_job(owner, steering={"echo-crash.txt": "boom"}, key="poison")
    healthy = [_echo_job(owner, key=f"healthy-{index}") for index in range(3)]
    for _ in range(3):  # max_attempts in the e2e deployment
        with running_agent(protocol_server.url, protocol_server.root, name="victim") as victim:
            wait_until(lambda victim=victim: victim.poll() is not None, what="the agent to crash on the poison job")
        _backdate_leases(poison)
        sweep()

    with running_agent(protocol_server.url, protocol_server.root, name="survivor"):
        wait_until(lambda: all(_state(job) == JobState.SUCCEEDED for job in healthy), what="the healthy jobs")

    job = ProcessingJob.objects.get(pk=poison)
    assert (job.state, job.failure_class, job.failure_code) == ("failed", "worker_interrupted", "attempts_exhausted")
    assert list(job.attempts.values_list("state", flat=True).distinct()) == [AttemptState.LOST]


def test_terminated_database_connections_mid_request_give_503_and_a_retry_succeeds(owner, protocol_server):
    import threading

    worker = FakeWorker(protocol_server.url)
    _, session, _ = worker.register({ECHO: 1})
    offers = {"offers": [{"operation": ECHO, "permits": 1}], "wait_seconds": 3}
    answers = []
    poll = threading.Thread(
        target=lambda: answers.append(
            worker.post(f"sessions/{session['session_id']}/acquire", offers, request_id="mid-request-1")
        )
    )
    poll.start()
    wait_until(lambda: _request_held("mid-request-1"), what="the long poll to hold its request")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
    poll.join(30)
    connection.close()

    status, body, _ = answers[0]
    # Behind a pooler the long poll holds no server session between its statements, so the pooler's next one
    # serves it; unless the pooler hands it a killed one before it has read the kill (CI's load showed it),
    # when it is the direct case's 503, and the retry below is answered.
    if settings.TRANSACTION_POOLED and status == 200:
        return
    assert status == 503 and body["error"]["code"] == "database_unavailable"
    status, body, _ = worker.post(
        f"sessions/{session['session_id']}/acquire", {**offers, "wait_seconds": 0}, request_id="mid-request-1"
    )
    assert status == 200 and body == {"claim": None, "claims": []}


def _request_held(request_id: str) -> bool:
    """Whether worker request ``request_id`` is in progress: its row is held without a response yet (the long
    poll holds it while it waits)."""
    return WorkerRequest.objects.filter(request_id=request_id, response_status__isnull=True).exists()


def test_a_reaper_killed_mid_sweep_leaves_every_row_done_or_untouched(owner, protocol_server, configure_deployment):
    from processing.queue.claims import claim_acquire
    from tests.processing.factories import WorkerSessionFactory

    roomy = ("running_jobs_per_requester", "running_jobs_per_project", "active_jobs_per_requester")
    configure_deployment(operations=[ECHO], limits=dict.fromkeys(roomy, 1000))
    sessions = [WorkerSessionFactory(processors={ECHO: 200}) for _ in range(2)]
    jobs = [_echo_job(owner, key=f"mid-sweep-{index}") for index in range(400)]
    for index, _ in enumerate(jobs):
        claim_acquire(session_id=sessions[index % 2].pk, offers={ECHO: 1})
    ProcessingAttempt.objects.filter(state=AttemptState.RUNNING).update(lease_expires_at="2000-01-01T00:00:00Z")

    reaper = _maintain_once()
    wait_until(lambda: ProcessingAttempt.objects.filter(state=AttemptState.LOST).count() >= 20, what="a partial sweep")
    reaper.kill()
    reaper.wait()
    assert ProcessingAttempt.objects.filter(state=AttemptState.LOST).count() < len(jobs), "killed too late to test"
    sweep()

    for job_id in jobs:
        job = ProcessingJob.objects.get(pk=job_id)
        assert job.state == JobState.QUEUED
        assert list(job.attempts.values_list("state", flat=True)) == [AttemptState.LOST]
