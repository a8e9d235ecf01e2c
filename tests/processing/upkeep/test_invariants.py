"""The invariant checker finds each broken promise, and finds nothing in a healthy database."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from processing.kernel.blobs import blob_put
from processing.models import OutboxEvent, ProcessingAttempt, ProcessingBlob, ProcessingJob, TerminalCommit
from processing.upkeep.invariants import check_all
from processing.upkeep.reapers import sweep
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_to_success
from tests.processing.sweeps import SWEEP_DATABASES

pytestmark = pytest.mark.django_db(databases=SWEEP_DATABASES)

LONG_AGO = timezone.now() - timedelta(days=2)


@pytest.fixture
def succeeded(owner_client, project):
    return build_to_success(submit_build(owner_client, project).json()["id"])


def _checks(**kwargs) -> set[str]:
    return {violation.check for violation in check_all(**kwargs)}


def test_a_healthy_database_has_no_violations(succeeded, owner_client, project):
    submit_build(owner_client, project, key="reuse")
    OutboxEvent.objects.update(dispatched_at=timezone.now())
    assert check_all() == []


def test_changed_artifact_bytes_are_found(succeeded):
    blob = ProcessingBlob.objects.get(pk=succeeded.artifacts.get(role="pdf").blob_id)
    ProcessingBlob.objects.filter(pk=blob.pk).update(data=bytes(blob.data)[:-1] + b"X")
    assert "artifact_digest" in _checks(include_outbox=False)


def test_a_queued_job_past_its_deadline_is_found_until_the_reaper_expires_it(owner_client, project):
    job_id = submit_build(owner_client, project).json()["id"]
    ProcessingJob.objects.filter(pk=job_id).update(deadline_at=LONG_AGO)
    assert "job_past_deadline" in _checks(include_outbox=False)
    sweep()
    assert "job_past_deadline" not in _checks(include_outbox=False)
    job = ProcessingJob.objects.get(pk=job_id)
    assert (job.state, job.completed_at is not None) == ("expired", True), "expired, not just hidden from the check"


def test_a_running_job_with_a_dead_lease_is_found_until_the_reaper_acts(owner_client, project):
    from processing.queue.claims import claim_acquire
    from tests.processing.factories import WorkerSessionFactory

    job_id = submit_build(owner_client, project).json()["id"]
    session = WorkerSessionFactory(processors={"latex.compile.pdf/v1": 1})
    claim_acquire(session_id=session.pk, offers={"latex.compile.pdf/v1": 1})
    ProcessingAttempt.objects.filter(job_id=job_id).update(lease_expires_at=LONG_AGO)
    assert "job_past_deadline" in _checks(include_outbox=False)
    sweep()
    assert ProcessingJob.objects.get(pk=job_id).state == "queued"
    assert "job_past_deadline" not in _checks(include_outbox=False)


def test_a_missing_terminal_commit_is_found(succeeded):
    TerminalCommit.objects.filter(job=succeeded).delete()
    assert "terminal_commit" in _checks(include_outbox=False)


def test_an_artifact_from_an_expired_claim_is_found(succeeded):
    attempt = succeeded.attempts.get()
    ProcessingAttempt.objects.filter(pk=attempt.pk).update(ended_at=attempt.lease_expires_at + timedelta(seconds=1))
    assert "expired_claim_published" in _checks(include_outbox=False)


def test_an_unreferenced_old_blob_is_found_until_collected():
    blob_id = blob_put(b"orphan bytes")
    ProcessingBlob.objects.filter(pk=blob_id).update(touched_at=LONG_AGO)
    assert "blob_unreferenced" in _checks(include_outbox=False)
    sweep()
    assert not ProcessingBlob.objects.filter(pk=blob_id).exists()
    assert "blob_unreferenced" not in _checks(include_outbox=False)


def test_a_stuck_outbox_event_is_found(succeeded):
    OutboxEvent.objects.update(created_at=LONG_AGO)
    assert "outbox_stuck" in _checks()
    assert "outbox_stuck" not in _checks(include_outbox=False)


def test_the_command_exits_1_and_lists_each_violation(succeeded, capsys):
    TerminalCommit.objects.filter(job=succeeded).delete()
    with pytest.raises(SystemExit) as exited:
        call_command("processing_check", "--skip-outbox")
    assert exited.value.code == 1
    assert f"terminal_commit: {succeeded.pk}" in capsys.readouterr().out


def test_the_command_passes_quietly_on_a_healthy_database(succeeded, capsys):
    call_command("processing_check", "--skip-outbox")
    assert "all promises hold" in capsys.readouterr().out
