"""Manual retry (docs/architecture.md §14): a new job linked to a failed one; the failed job is never reopened.

The new job keeps the operation, options, input profile and the immutable input
blob of the failed one, belongs to the same requester, and enters the queue
through the normal transition (or finishes from a reusable result). The check
for an earlier retry runs under the failed job's row lock, so a double click or
two operators retrying at once get the same new job.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from access import facade as access
from processing.exceptions import JobNotRetryable
from processing.kernel import capabilities
from processing.kernel.configuration import limits
from processing.models import JobState, ProcessingBlob, ProcessingJob
from processing.models.jobs import CONTENT_FAILURES
from processing.selectors import job_visible
from processing.submission.admission import admission_check
from processing.submission.submit import job_queue_or_reuse

RETRYABLE_STATES = (JobState.FAILED,)


@dataclass(frozen=True)
class Retried:
    job_id: uuid.UUID
    replayed: bool


def job_is_retryable(job: ProcessingJob) -> bool:
    """A failed job whose input may succeed another time: not one its content made fail."""
    return job.state in RETRYABLE_STATES and job.input_blob_id is not None and job.failure_class not in CONTENT_FAILURES


def job_retry(*, actor_id: int, job_id) -> Retried:
    """Retry the caller's own failed job as a new linked job.

    Raises JobNotFound, JobNotRetryable, OperationNotEnabled, ActionForbidden,
    TooManyActiveJobs or QueueFull.
    """
    job = job_visible(user_id=actor_id, job_id=job_id)
    return job_retry_by_operator(job_id=job.pk)


def job_retry_by_operator(*, job_id, recorded: Callable[[str], None] | None = None) -> Retried:
    """Retry on an operator's behalf: the new job is the requester's and needs their current permission.
    ``recorded`` is told the outcome ("retried", "retried earlier") inside the retry's transaction: the
    operator's audit record commits with it.

    Same errors as ``job_retry``, plus ProjectNotFound when the requester may no longer see the project.
    """
    recorded = recorded or _unrecorded
    limit = limits()
    with transaction.atomic(durable=True):
        failed = ProcessingJob.objects.select_for_update().get(pk=job_id)
        earlier = ProcessingJob.objects.filter(retry_of_id=failed.pk).order_by("created_at").first()
        if earlier is not None:
            recorded("retried earlier")
            return Retried(earlier.pk, replayed=True)
        if not job_is_retryable(failed):
            raise JobNotRetryable(details={"state": failed.state, "failure_class": failed.failure_class})
        operation = capabilities.operation_enabled(failed.operation)
        if failed.project_id is not None and operation.permission:
            access.permission_require(
                user_id=failed.requester_id, project_id=failed.project_id, permission=operation.permission
            )
        admission_check(
            requester_id=failed.requester_id, project_id=failed.project_id, limits=limit, operation=failed.operation
        )
        retry = _linked_copy(failed, limit.max_attempts, timedelta(seconds=limit.preparation_seconds))
        ProcessingBlob.objects.filter(pk=failed.input_blob_id).update(touched_at=timezone.now())
        job_queue_or_reuse(
            operation,
            retry.pk,
            blob_id=failed.input_blob_id,
            input_digest=failed.input_digest,
            limit=limit,
            captured=failed.captured,  # the same input, so the same document versions
        )
        recorded("retried")
    return Retried(retry.pk, replayed=False)


def _unrecorded(outcome: str) -> None:
    pass


def _linked_copy(failed: ProcessingJob, max_attempts: int, preparation: timedelta) -> ProcessingJob:
    return ProcessingJob.objects.create(
        operation=failed.operation,
        requester_id=failed.requester_id,
        project_id=failed.project_id,
        options=failed.options,
        options_digest=failed.options_digest,
        input_profile=failed.input_profile,
        input_filename=failed.input_filename,
        retry_of_id=failed.pk,
        max_attempts=max_attempts,
        deadline_at=timezone.now() + preparation,
    )
