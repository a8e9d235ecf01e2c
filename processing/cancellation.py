"""Cancellation (architecture §5). It serializes with claims and delivery on the job row."""

from django.db import transaction

from processing.models import JobState, ProcessingJob
from processing.selectors import job_visible
from processing.transitions import job_transition


def job_cancel(*, actor_id: int, job_id) -> ProcessingJob:
    """Cancel the caller's job if it can be cancelled, and return it as it now is.

    Raises JobNotFound when the caller may not see the job.
    """
    job = job_visible(user_id=actor_id, job_id=job_id)
    return job_cancel_by_operator(job_id=job.pk)


def job_cancel_by_operator(*, job_id) -> ProcessingJob:
    """The same rules without the requester check, for operators (the admin).

    ``preparing``/``queued`` → ``cancelled`` at once; ``running`` → a request the
    worker sees on its next heartbeat; ``finalizing`` or terminal → unchanged.
    """
    with transaction.atomic():
        job = ProcessingJob.objects.select_for_update().get(pk=job_id)
        if job.state in (JobState.PREPARING, JobState.QUEUED):
            job_transition(job_id=job.pk, to=JobState.CANCELLED, only_from={job.state})
        elif job.state == JobState.RUNNING and not job.cancellation_requested:
            ProcessingJob.objects.filter(pk=job.pk, state=JobState.RUNNING).update(cancellation_requested=True)
    return ProcessingJob.objects.get(pk=job_id)


def job_is_cancellable(job: ProcessingJob) -> bool:
    """Would a cancel change anything? Queued work stops at once; running work is asked to stop."""
    return job.state in (JobState.PREPARING, JobState.QUEUED) or (
        job.state == JobState.RUNNING and not job.cancellation_requested
    )
