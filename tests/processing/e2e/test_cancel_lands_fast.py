"""Cancel lands fast: a running LaTeX build, cancelled through the public API, ends ``cancelled`` at once.

A real server and a real agent running TeX Live in bubblewrap. The server's limits make the agent's heartbeat
interval long (``HEARTBEAT_SECONDS``), so a cancel that landed by a claim heartbeat would take that long: it
lands sooner only because the cancelling transaction wakes the agent's cancellation long-poll.
"""

import os
import statistics
import time
from datetime import timedelta

import pytest
from django.db.models import F
from django.utils import timezone

from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob, WorkerSession
from tests.factories import bearer_token_for
from tests.live_site import site_fixture
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.builds import looping_build, processes_working_under
from tests.processing.e2e.conftest import E2E_OPERATIONS, RawHttp
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

LATEX = "latex.compile.pdf/v1"
LONG_LIMITS = {"lease_seconds": 300, "session_ttl_seconds": 300, "max_attempts": 3}
HEARTBEAT_SECONDS = min(LONG_LIMITS["lease_seconds"], LONG_LIMITS["session_ttl_seconds"]) / 3  # as Core tells agents
MEDIAN_TARGET_SECONDS = 2.0


# The e2e server (see conftest), with limits that space an agent's heartbeats ``HEARTBEAT_SECONDS`` apart.
protocol_server = site_fixture(
    "protocol_server", "cancel-protocol", operations=E2E_OPERATIONS, limits=LONG_LIMITS, test_operations=True, workers=2
)


@pytest.fixture
def author(owner, protocol_server):
    return RawHttp(protocol_server.url, bearer_token_for(owner))


@pytest.fixture
def latex_agent(protocol_server, request):
    """A LaTeX agent of this test's own; yields the directory its jobs work in."""
    name = f"cancel-{request.node.name[:40]}"
    root = protocol_server.root
    with running_agent(protocol_server.url, root, "--operations", LATEX, name=name):
        yield {"name": name, "work": root / f"{name}-work"}


def cancelled_after(author, job_id: str) -> tuple[float, dict]:
    """Cancel ``job_id``; the seconds until the job has ended (a waiting GET answers as it ends), and the job."""
    requested = time.monotonic()
    status, _, _ = author.json("POST", f"/v1/processing/jobs/{job_id}/cancel")
    assert status == 200
    body = {"state": JobState.RUNNING}
    while body["state"] == JobState.RUNNING:
        _, body, _ = author.json("GET", f"/v1/processing/jobs/{job_id}?wait=30")
    return time.monotonic() - requested, body


def test_cancel_of_a_running_looping_build_ends_it_cancelled_with_no_artifact_and_no_tex_left(
    owner, author, latex_agent
):
    job_id = looping_build(owner, author, latex_agent["work"], "loop")

    _, job = cancelled_after(author, job_id)

    assert (job["state"], job["artifacts"]) == ("cancelled", [])
    assert processes_working_under(latex_agent["work"]) == [], "TeX outlived its cancelled build"
    attempt = ProcessingAttempt.objects.get(job_id=job_id)
    assert (attempt.state, attempt.failure_code) == (AttemptState.CANCELLED, "cancelled")


def test_the_agent_is_woken_so_a_cancel_lands_long_before_its_next_heartbeat(owner, author, latex_agent):
    # The agent's first heartbeat comes a few seconds after it starts; after it, the next is HEARTBEAT_SECONDS away.
    beaten = WorkerSession.objects.filter(instance=latex_agent["name"], last_heartbeat_at__gt=F("registered_at"))
    wait_until(beaten.exists, what="the agent's first heartbeat", timeout=30)
    job_id = looping_build(owner, author, latex_agent["work"], "woken")
    lease_at_claim = ProcessingAttempt.objects.get(job_id=job_id).lease_expires_at

    requested_at = timezone.now()
    cancelled_after(author, job_id)

    job, attempt = ProcessingJob.objects.get(pk=job_id), ProcessingAttempt.objects.get(job_id=job_id)
    assert job.state == JobState.CANCELLED
    assert job.completed_at - requested_at < timedelta(seconds=HEARTBEAT_SECONDS / 20)
    assert attempt.lease_expires_at == lease_at_claim, "a claim heartbeat came meanwhile: it may have carried it"


def test_cancels_land_within_two_seconds_at_the_median(owner, author, latex_agent):
    samples = []
    for index in range(int(os.environ.get("QUIRE_CANCEL_SAMPLES", "5"))):
        job_id = looping_build(owner, author, latex_agent["work"], f"sample-{index}")
        seconds, job = cancelled_after(author, job_id)
        assert job["state"] == "cancelled"
        samples.append(seconds)

    median = statistics.median(samples)
    print(f"cancel → cancelled: median {median:.3f} s, max {max(samples):.3f} s, samples {samples}")
    assert median < MEDIAN_TARGET_SECONDS, samples
