"""`/metrics` after a scripted run: each figure seed 000 asks for, with the value the run implies."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from processing.models import ProcessingAttempt, ProcessingJob
from processing.upkeep import reapers
from tests.factories import ProjectFactory
from tests.processing import worker_calls as worker
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_to_success
from tests.processing.sweeps import SWEEP_DATABASES

pytestmark = pytest.mark.django_db(databases=SWEEP_DATABASES)

LATEX = "latex.compile.pdf/v1"
HOUR = timedelta(hours=1)


def metrics() -> dict[tuple[str, tuple], float]:
    response = Client(REMOTE_ADDR="127.0.0.1").get("/metrics")
    assert response.status_code == 200
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


def failing_step():
    raise RuntimeError("a reaper step that fails")


@pytest.fixture
def scripted_run(owner, api_client_for, monkeypatch):
    """Two builds (one a reuse hit); echo jobs: one failed, one lost its lease and runs again with 6 bytes
    staged, one queued for an hour; and a sweep in which one reaper step fails."""
    client, project = api_client_for(owner), ProjectFactory(owner=owner, starter=True)
    build_to_success(submit_build(client, project, key="first").json()["id"])
    assert submit_build(client, project, key="again").json()["cache_hit"] is True

    failed, lost, waiting = worker.queue_echo_jobs(owner, 3)
    claim = worker.claim_the_next_job(worker.session_with_one_echo_slot())
    assert claim["job_id"] == failed
    report = {"failure_class": "processor_rejected", "code": "bad", "message": "refused"}
    assert worker.post(f"claims/{claim['claim_id']}/failure", report).json()["job_state"] == "failed"
    claim = worker.claim_the_next_job(worker.session_with_one_echo_slot())
    # (Database time in a test is its transaction's start: "past" is an hour ago, not a moment.)
    ProcessingAttempt.objects.filter(claim_id=claim["claim_id"]).update(lease_expires_at=timezone.now() - HOUR)
    assert reapers.leases_expire() == 1
    claim = worker.claim_the_next_job(worker.session_with_one_echo_slot())
    assert claim["job_id"] == lost and claim["attempt"] == 2
    worker.stage_echo_output(claim, b"staged")
    ProcessingJob.objects.filter(pk=waiting).update(queued_at=timezone.now() - HOUR)

    before = metrics().get(("quire_processing_cleanup_failures_total", (("step", "outbox_events_retired"),)), 0)
    monkeypatch.setattr(reapers, "STEPS", [("outbox_events_retired", failing_step)])
    reapers.sweep()
    return before


def test_each_required_figure_has_the_value_the_run_implies(scripted_run):
    figures = metrics()

    def figure(name: str, **labels) -> float:
        return figures[(name, tuple(sorted(labels.items())))]

    assert figure("quire_processing_queue_depth", operation=worker.ECHO) == 1
    assert 3540 <= figure("quire_processing_queue_oldest_age_seconds", operation=worker.ECHO) <= 3600
    assert figure("quire_processing_active_attempts", operation=worker.ECHO) == 1
    assert figure("quire_processing_lease_losses") == 1
    assert figure("quire_processing_failures_24h", failure_class="processor_rejected") == 1
    assert figure("quire_processing_cache_hits") == 1
    assert figure("quire_processing_jobs", operation=LATEX, state="succeeded") == 2
    assert figure("quire_processing_job_duration_seconds_p50", operation=LATEX) > 0
    assert figure("quire_processing_staged_bytes") == len(b"staged")
    assert figure("quire_processing_cleanup_failures_total", step="outbox_events_retired") == scripted_run + 1
