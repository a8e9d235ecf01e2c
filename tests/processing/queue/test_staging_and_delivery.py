"""Staging and delivery at service level: a refused upload or delivery changes nothing."""

import hashlib
import uuid
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from processing.exceptions import ClaimLost, JobCancelled, OutputRejected
from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingBlob, ProcessingJob, StagedOutput
from processing.queue.cancellation import job_cancel
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, delivery_accept
from processing.queue.staging import output_stage
from processing.submission.submit import job_submit
from tests.factories import ProjectFactory
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import stage

pytestmark = pytest.mark.django_db

ECHO = "test.echo/v1"
OCTETS = "application/octet-stream"


@pytest.fixture
def claim(owner):
    project = ProjectFactory(owner=owner, starter=True)
    job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key="staging", project_id=project.pk)
    claim = claim_acquire(session_id=WorkerSessionFactory(processors={ECHO: 1}).pk, offers={ECHO: 1})
    assert claim is not None
    return claim


def _blob_exists(data: bytes) -> bool:
    return ProcessingBlob.objects.filter(sha256=hashlib.sha256(data).hexdigest()).exists()


def test_staged_bytes_are_kept_once_however_often_they_are_uploaded(claim):
    first = stage(claim, "echo", OCTETS, "echo.bin", b"echoed bytes")
    again = stage(claim, "echo", OCTETS, "echo.bin", b"echoed bytes")

    assert first.id == again.id and first.blob_id == again.blob_id
    assert StagedOutput.objects.get(attempt_id=claim.attempt_id).sha256 == hashlib.sha256(b"echoed bytes").hexdigest()
    assert ProcessingBlob.objects.filter(pk=first.blob_id).count() == 1


@pytest.mark.parametrize(
    ("role", "media_type", "reason"),
    [("pdf", "application/pdf", "declares no output role"), ("echo", "text/plain", "takes application/octet-stream")],
)
def test_an_output_the_operation_does_not_declare_is_refused_and_stores_nothing(claim, role, media_type, reason):
    with pytest.raises(OutputRejected, match=reason):
        stage(claim, role, media_type, "out", b"undeclared output")

    assert not StagedOutput.objects.exists() and not _blob_exists(b"undeclared output")


def test_an_output_larger_than_its_role_allows_is_refused_and_stores_nothing(claim, configure_deployment):
    configure_deployment(limits={"artifact_bytes": 8})

    with pytest.raises(OutputRejected, match="larger than its role allows"):
        stage(claim, "echo", OCTETS, "out", b"nine bytes")

    assert not StagedOutput.objects.exists() and not _blob_exists(b"nine bytes")


def test_bytes_that_do_not_match_their_digest_are_refused(claim):
    with pytest.raises(OutputRejected, match="do not match"):
        output_stage(
            claim_id=claim.claim_id,
            role="echo",
            media_type=OCTETS,
            filename="out",
            data=b"these",
            expected_sha256=hashlib.sha256(b"other").hexdigest(),
        )

    assert not StagedOutput.objects.exists() and not _blob_exists(b"these")


def test_an_upload_under_an_expired_claim_is_refused_and_stores_nothing(claim):
    ProcessingAttempt.objects.filter(pk=claim.attempt_id).update(lease_expires_at=timezone.now() - timedelta(1))

    with pytest.raises(ClaimLost):
        stage(claim, "echo", OCTETS, "out", b"too late")

    assert not StagedOutput.objects.exists() and not _blob_exists(b"too late")


def test_a_delivery_without_its_required_outputs_is_refused_and_changes_nothing(claim):
    with pytest.raises(OutputRejected) as refused:
        delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics(log="no outputs"))

    assert refused.value.details == {"missing": ["echo"]}
    job = ProcessingJob.objects.get(pk=claim.job_id)
    assert (job.state, job.finalization_token, job.diagnostic_log) == (JobState.RUNNING, None, "")
    assert ProcessingAttempt.objects.get(pk=claim.attempt_id).state == AttemptState.RUNNING


def test_a_delivery_makes_the_job_finalizing_with_its_diagnostics(claim):
    stage(claim, "echo", OCTETS, "out", b"{}")
    entries = ({"file": "main.tex", "line": 3, "severity": "warning", "message": "Overfull \\hbox"},)

    job_id, token = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics(log="the log", entries=entries))

    job = ProcessingJob.objects.get(pk=job_id)
    assert (job.state, job.phase, job.finalization_token) == (JobState.FINALIZING, "validating_result", token)
    assert (job.diagnostic_log, job.diagnostics) == ("the log", list(entries))
    assert job.finalization_expires_at > timezone.now()
    attempt = ProcessingAttempt.objects.get(pk=claim.attempt_id)
    assert attempt.state == AttemptState.DELIVERED and attempt.ended_at is not None


def test_a_delivery_after_a_cancellation_request_ends_the_job_cancelled(claim, owner):
    stage(claim, "echo", OCTETS, "out", b"{}")
    job_cancel(actor_id=owner.pk, job_id=claim.job_id)

    with pytest.raises(JobCancelled):
        delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())

    assert ProcessingJob.objects.get(pk=claim.job_id).state == JobState.CANCELLED
    assert ProcessingAttempt.objects.get(pk=claim.attempt_id).state == AttemptState.CANCELLED


def test_a_delivery_under_an_expired_claim_is_refused_and_changes_nothing(claim):
    stage(claim, "echo", OCTETS, "out", b"{}")
    ProcessingAttempt.objects.filter(pk=claim.attempt_id).update(lease_expires_at=timezone.now() - timedelta(1))

    with pytest.raises(ClaimLost):
        delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())

    assert ProcessingJob.objects.get(pk=claim.job_id).state == JobState.RUNNING
    assert ProcessingAttempt.objects.get(pk=claim.attempt_id).state == AttemptState.RUNNING


@pytest.mark.parametrize("state", [AttemptState.RUNNING, AttemptState.DELIVERED])
def test_the_database_refuses_a_second_running_or_delivered_attempt_of_a_job(claim, state):
    ProcessingAttempt.objects.filter(pk=claim.attempt_id).update(state=state)
    first = ProcessingAttempt.objects.get(pk=claim.attempt_id)

    with pytest.raises(IntegrityError), transaction.atomic():
        ProcessingAttempt.objects.create(
            job_id=claim.job_id,
            number=first.number + 1,
            operation=ECHO,
            claim_id=uuid.uuid4(),
            session_id=first.session_id,
            processor_contract="echo/1",
            state=state,
            lease_expires_at=timezone.now() + timedelta(minutes=1),
            started_at=timezone.now(),
        )
