"""Cancellation (architecture §5). It serializes with claims and delivery on the job row."""

from django.db import transaction

from processing.models import JobState, ProcessingJob
from processing.selectors import job_visible
from processing.transitions import job_transition


def job_cancel(*, actor_id: int, job_id) -> ProcessingJob:
    """Cancel what can be cancelled and return the job as it now is.

    ``preparing``/``queued`` → ``cancelled`` at once; ``running`` → a request the
    worker sees on its next heartbeat; ``finalizing`` or terminal → unchanged.
    """
    job = job_visible(user_id=actor_id, job_id=job_id)
    with transaction.atomic():
        job = ProcessingJob.objects.select_for_update().get(pk=job.pk)
        if job.state in (JobState.PREPARING, JobState.QUEUED):
            job_transition(job_id=job.pk, to=JobState.CANCELLED, only_from={job.state})
        elif job.state == JobState.RUNNING and not job.cancellation_requested:
            ProcessingJob.objects.filter(pk=job.pk, state=JobState.RUNNING).update(cancellation_requested=True)
    return ProcessingJob.objects.get(pk=job.pk)
