"""Each reaper does its one job, and only that: what is past its time goes, what is not stays."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from processing.kernel.clock import db_now
from processing.kernel.configuration import limits
from processing.models import IdempotencyReservation, JobState, OutboxEvent, ProcessingJob, StagedOutput
from processing.submission.submit import job_submit
from processing.upkeep import reapers
from processing.upkeep.reapers import (
    STAGED_GRACE,
    deadlines_expire,
    outbox_retire,
    records_expire,
    staged_orphans_delete,
)
from tests.factories import ProjectFactory
from tests.processing import worker_calls as worker
from tests.processing.factories import JobFactory
from tests.processing.sweeps import SWEEP_DATABASES

pytestmark = pytest.mark.django_db


def preparing_job(owner, *, deadline_in: timedelta) -> ProcessingJob:
    return JobFactory(preparing=True, requester=owner, deadline_at=db_now() + deadline_in)


def test_an_abandoned_preparation_expires_after_its_deadline_and_a_live_one_does_not(owner):
    abandoned = preparing_job(owner, deadline_in=-timedelta(seconds=1))
    live = preparing_job(owner, deadline_in=timedelta(minutes=5))

    assert deadlines_expire() == 1

    abandoned.refresh_from_db(), live.refresh_from_db()
    assert (abandoned.state, live.state) == (JobState.EXPIRED, JobState.PREPARING)
    assert abandoned.completed_at is not None


def staged_output_of_a_failed_attempt(owner) -> StagedOutput:
    worker.queue_echo_jobs(owner, 1)
    claim = worker.claim_the_next_job(worker.session_with_one_echo_slot())
    worker.stage_echo_output(claim)
    report = {"failure_class": "processor_rejected", "code": "crash", "message": "it crashed"}
    assert worker.post(f"claims/{claim['claim_id']}/failure", report).status_code == 200
    return StagedOutput.objects.get(attempt__claim_id=claim["claim_id"])


def test_staged_outputs_of_an_ended_attempt_are_dropped_after_the_grace_and_not_before(owner):
    orphan = staged_output_of_a_failed_attempt(owner)

    assert staged_orphans_delete() == 0, "within the grace period"
    StagedOutput.objects.filter(pk=orphan.pk).update(created_at=db_now() - STAGED_GRACE - timedelta(seconds=1))
    assert staged_orphans_delete() == 1
    assert not StagedOutput.objects.filter(pk=orphan.pk).exists()


def test_staged_outputs_of_a_running_attempt_stay_however_old(owner):
    worker.queue_echo_jobs(owner, 1)
    claim = worker.claim_the_next_job(worker.session_with_one_echo_slot())
    worker.stage_echo_output(claim)
    StagedOutput.objects.update(created_at=db_now() - timedelta(days=1))

    assert staged_orphans_delete() == 0
    assert StagedOutput.objects.filter(attempt__claim_id=claim["claim_id"]).exists()


def test_an_expired_idempotency_key_is_forgotten_and_may_name_a_new_job(owner):
    project = ProjectFactory(owner=owner, starter=True)
    first = job_submit(
        actor_id=owner.pk, operation_name=worker.ECHO, idempotency_key="key", project_id=project.pk
    ).job_id
    kept = job_submit(
        actor_id=owner.pk, operation_name=worker.ECHO, idempotency_key="other", project_id=project.pk
    ).job_id
    IdempotencyReservation.objects.filter(key="key").update(expires_at=db_now() - timedelta(seconds=1))

    assert records_expire() >= 1

    assert list(IdempotencyReservation.objects.values_list("key", flat=True)) == ["other"]
    again = job_submit(actor_id=owner.pk, operation_name=worker.ECHO, idempotency_key="key", project_id=project.pk)
    assert not again.replayed and again.job_id not in (first, kept)


def outbox_event(*, dispatched_days_ago: float | None) -> OutboxEvent:
    now = db_now()
    dispatched = None if dispatched_days_ago is None else now - timedelta(days=dispatched_days_ago)
    return OutboxEvent.objects.create(
        kind="test", payload={}, created_at=now, available_at=now, dispatched_at=dispatched
    )


def test_dispatched_outbox_events_are_retired_after_retention_and_pending_ones_never():
    retention = limits().retention_days
    old = outbox_event(dispatched_days_ago=retention + 1)
    recent = outbox_event(dispatched_days_ago=retention - 1)
    pending = outbox_event(dispatched_days_ago=None)
    OutboxEvent.objects.filter(pk=pending.pk).update(created_at=db_now() - timedelta(days=retention + 1))

    assert outbox_retire() == 1

    assert set(OutboxEvent.objects.values_list("pk", flat=True)) == {recent.pk, pending.pk}
    assert not OutboxEvent.objects.filter(pk=old.pk).exists()


@pytest.mark.django_db(databases=SWEEP_DATABASES)
def test_a_failing_step_is_named_in_the_sweep_and_by_the_loop_and_the_others_still_run(monkeypatch):
    def broken():
        raise RuntimeError("a step that cannot run")

    monkeypatch.setattr(reapers, "STEPS", [("broken_step", broken), *reapers.STEPS])
    errors = StringIO()

    report = reapers.sweep()
    call_command("processing_maintain", "--once", stderr=errors)

    assert report.failed == ["broken_step"]
    assert "leases_lost" in report.counts, "the steps after it ran"
    assert "steps failed (see the log): broken_step" in errors.getvalue()
