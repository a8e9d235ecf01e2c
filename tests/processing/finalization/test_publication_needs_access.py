"""Finalization publishes only while the requester may still see the result: the publishing statement decides."""

import pytest
from django.utils import timezone

from access.services import member_remove, member_set
from processing.finalization import artifacts
from processing.finalization.finalize import job_finalize
from processing.finalization.publication import Publication, PublicationCondition
from processing.finalization.registry import FINALIZERS
from processing.models import JobState, ProcessingBlob, ProcessingJob, TerminalCommit
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, delivery_accept
from processing.submission.submit import job_submit
from tests.factories import ProjectFactory, UserFactory
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import stage
from workspace.services import project_delete

pytestmark = pytest.mark.django_db

ECHO = "test.echo/v1"


@pytest.fixture(autouse=True)
def echo_deployment(configure_deployment):
    configure_deployment(operations=[ECHO])


@pytest.fixture
def shared_project(owner):
    return ProjectFactory(owner=owner, starter=True)


@pytest.fixture
def editor(owner, shared_project):
    user = UserFactory()
    member_set(actor_id=owner.pk, project_id=shared_project.pk, username=user.username, role="editor")
    return user


def _delivered_job(requester, project) -> tuple[str, object]:
    """The requester's echo job, claimed, staged and delivered: (job id, finalization token)."""
    job_submit(actor_id=requester.pk, operation_name=ECHO, idempotency_key="k", project_id=project.pk)
    claim = claim_acquire(session_id=WorkerSessionFactory(processors={ECHO: 1}).pk, offers={ECHO: 1})
    stage(claim, "echo", "application/octet-stream", "echo", b"echoed")
    return delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())


def _failed_for_access_with_nothing_published(job_id) -> None:
    job = ProcessingJob.objects.get(pk=job_id)
    assert (job.state, job.failure_class, job.failure_code) == (JobState.FAILED, "invalid_input", "access_revoked")
    assert not job.artifacts.exists()
    assert list(TerminalCommit.objects.filter(job_id=job_id).values_list("state", flat=True)) == [JobState.FAILED]


def test_a_grant_revoked_after_delivery_fails_the_job_and_publishes_nothing(owner, editor, shared_project):
    job_id, token = _delivered_job(editor, shared_project)
    member_remove(actor_id=owner.pk, project_id=shared_project.pk, username=editor.username)

    assert job_finalize(job_id=job_id, token=token) == JobState.FAILED
    _failed_for_access_with_nothing_published(job_id)


def test_a_requester_demoted_to_a_role_that_may_not_build_gets_nothing(owner, editor, shared_project):
    job_id, token = _delivered_job(editor, shared_project)
    member_set(actor_id=owner.pk, project_id=shared_project.pk, username=editor.username, role="viewer")

    assert job_finalize(job_id=job_id, token=token) == JobState.FAILED
    _failed_for_access_with_nothing_published(job_id)


def test_a_project_deleted_after_delivery_fails_the_job_and_publishes_nothing(owner, shared_project):
    job_id, token = _delivered_job(owner, shared_project)
    project_delete(actor_id=owner.pk, project_id=shared_project.pk)

    assert job_finalize(job_id=job_id, token=token) == JobState.FAILED
    _failed_for_access_with_nothing_published(job_id)


def test_a_grant_revoked_while_the_outputs_are_checked_still_publishes_nothing(
    owner, editor, shared_project, monkeypatch
):
    checked = artifacts.staged_bytes_verified

    def revoked_meanwhile(job, staged):
        data = checked(job, staged)
        member_remove(actor_id=owner.pk, project_id=shared_project.pk, username=editor.username)
        return data

    monkeypatch.setattr(artifacts, "staged_bytes_verified", revoked_meanwhile)
    job_id, token = _delivered_job(editor, shared_project)

    assert job_finalize(job_id=job_id, token=token) == JobState.FAILED
    _failed_for_access_with_nothing_published(job_id)


def test_a_member_who_keeps_access_gets_the_artifact(editor, shared_project):
    job_id, token = _delivered_job(editor, shared_project)

    assert job_finalize(job_id=job_id, token=token) == JobState.SUCCEEDED
    assert list(ProcessingJob.objects.get(pk=job_id).artifacts.values_list("role", flat=True)) == ["echo"]


def test_a_publication_refused_by_its_condition_keeps_none_of_its_own_work(owner, shared_project, monkeypatch):
    def work_then_refused(job, staged):
        def own_work(locked_job):
            ProcessingBlob.objects.create(sha256="f" * 64, size_bytes=1, data=b"x", touched_at=timezone.now())
            return {}

        never = PublicationCondition("false", [], explain=lambda: None)
        return Publication(publish=staged, before_publish=own_work, condition=never)

    monkeypatch.setitem(FINALIZERS, ECHO, work_then_refused)
    job_id, token = _delivered_job(owner, shared_project)

    assert job_finalize(job_id=job_id, token=token) == JobState.FINALIZING, "left for recovery, not failed"
    assert not ProcessingBlob.objects.filter(sha256="f" * 64).exists()
    assert not ProcessingJob.objects.get(pk=job_id).artifacts.exists()
