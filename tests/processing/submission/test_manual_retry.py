"""Manual retry: a new linked job from a failed one, never a reopened one."""

import pytest

from access.exceptions import ActionForbidden
from access.services import member_set
from processing.exceptions import JobNotFound, JobNotRetryable, TooManyActiveJobs
from processing.models import JobState, ProcessingJob
from processing.submission.manual_retry import job_retry, job_retry_by_operator
from tests.factories import ProjectFactory, UserFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import JobFactory
from tests.processing.ui.conftest import fail_build

pytestmark = pytest.mark.django_db


@pytest.fixture
def failed(owner_client, project) -> ProcessingJob:
    """A build that failed through no fault of its content (it ran past a limit an operator may raise)."""
    job_id = submit_build(owner_client, project, key="to-fail").json()["id"]
    return fail_build(job_id, failure_class="resource_limit", message="The build ran past its wall-clock limit.")


def test_a_retry_is_a_new_queued_job_with_the_same_input_and_options(owner, failed):
    retried = job_retry(actor_id=owner.pk, job_id=failed.pk)

    job = ProcessingJob.objects.get(pk=retried.job_id)
    assert not retried.replayed and job.pk != failed.pk and job.retry_of_id == failed.pk
    assert (job.state, job.phase, job.attempt_count) == (JobState.QUEUED, "waiting_for_worker", 0)
    assert (job.input_blob_id, job.input_digest, job.options) == (failed.input_blob_id, failed.input_digest, {})
    assert ProcessingJob.objects.get(pk=failed.pk).state == JobState.FAILED


def test_retrying_twice_returns_the_first_retry(owner, failed):
    first = job_retry(actor_id=owner.pk, job_id=failed.pk)
    second = job_retry_by_operator(job_id=failed.pk)

    assert second.replayed and second.job_id == first.job_id


def test_only_failed_jobs_are_retried(owner, owner_client, project):
    queued = submit_build(owner_client, project, key="queued").json()["id"]

    with pytest.raises(JobNotRetryable):
        job_retry(actor_id=owner.pk, job_id=queued)


def test_a_job_that_failed_before_capture_cannot_be_retried(owner, project):
    job = JobFactory(failed=True, operation="latex.compile.pdf/v1", requester=owner, project_id=project.pk)

    with pytest.raises(JobNotRetryable):
        job_retry_by_operator(job_id=job.pk)


@pytest.mark.parametrize("failure_class", ["processor_rejected", "unsupported_dependency", "invalid_input"])
def test_a_job_its_content_made_fail_is_not_retried(owner, owner_client, project, failure_class):
    job_id = submit_build(owner_client, project, key=f"content-{failure_class}").json()["id"]
    failed = fail_build(job_id, failure_class=failure_class)

    with pytest.raises(JobNotRetryable):
        job_retry(actor_id=owner.pk, job_id=failed.pk)
    assert not ProcessingJob.objects.filter(retry_of_id=failed.pk).exists()


def test_someone_elses_job_is_not_found(failed):
    with pytest.raises(JobNotFound):
        job_retry(actor_id=UserFactory().pk, job_id=failed.pk)


def test_an_operator_retry_needs_the_requesters_current_permission(owner, project, failed):
    other_owner = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=other_owner.username, role="owner")
    member_set(actor_id=other_owner.pk, project_id=project.pk, username=owner.username, role="viewer")

    with pytest.raises(ActionForbidden):
        job_retry_by_operator(job_id=failed.pk)
    assert not ProcessingJob.objects.filter(retry_of_id=failed.pk).exists()


def test_a_retry_goes_through_admission(owner, failed, configure_deployment, owner_client):
    configure_deployment(limits={"active_jobs_per_requester": 1})
    submit_build(owner_client, ProjectFactory(owner=owner, starter=True), key="busy")

    with pytest.raises(TooManyActiveJobs):
        job_retry(actor_id=owner.pk, job_id=failed.pk)
