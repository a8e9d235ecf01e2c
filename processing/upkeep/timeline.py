"""A job's story for the operators' job page: every event the rows record, in order, with the time between.

Read from the job, its attempts (each a claim by a session, ended delivered, failed, released, lost or
cancelled), its published artifacts and its terminal commit; nothing is stored twice for it.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from processing.models import AttemptState, JobState, ProcessingJob
from processing.queue.fair_share import FAIR_SHARE_YIELD

_ENDINGS = {
    AttemptState.DELIVERED: "delivered its results; finalization began",
    AttemptState.FAILED: "failed",
    AttemptState.RELEASED: "released the job back to the queue",
    AttemptState.LOST: "lost its lease; the job went back to the queue",
    AttemptState.CANCELLED: "stopped: the job was cancelled",
}
_YIELDED = "gave its slot to another requester's waiting job (fair share); the job went back to the queue"


@dataclass(frozen=True)
class TimelineEvent:
    at: datetime
    what: str
    detail: str = ""
    since_previous: timedelta | None = None


def job_timeline(job_id: uuid.UUID) -> tuple[TimelineEvent, ...]:
    job = ProcessingJob.objects.get(pk=job_id)
    events = [(job.created_at, 0, "submitted", _submitted_detail(job))]
    if job.queued_at:
        # Capture and queueing commit together (submission.submit.job_queue_or_reuse): one event, one time.
        events.append((job.queued_at, 1, "input captured, queued", _captured_detail(job)))
    for attempt in job.attempts.select_related("session").order_by("number"):
        by = f"by {attempt.session}" if attempt.session else "by a session since removed"
        events.append((attempt.started_at, 2, f"attempt {attempt.number} claimed", by))
        if attempt.ended_at:
            code = f" ({attempt.failure_class}: {attempt.failure_code})" if attempt.failure_class else ""
            ending = _YIELDED if attempt.failure_code == FAIR_SHARE_YIELD else _ENDINGS[attempt.state]
            events.append((attempt.ended_at, 3, f"attempt {attempt.number} {ending}", code.strip()))
    for artifact in job.artifacts.order_by("created_at"):
        published = f"reused {artifact.role}" if job.cache_hit else f"finalization published {artifact.role}"
        events.append((artifact.created_at, 4, published, artifact.filename))
    events.sort(key=lambda event: (event[0], event[1]))
    if job.completed_at:
        # Last, whatever the clocks say: publication commits in the terminal transaction, whose time is its start.
        events.append((job.completed_at, 5, job.state, _terminal_detail(job)))
    timeline, previous = [], None
    for at, _, what, detail in events:
        timeline.append(TimelineEvent(at, what, detail, max(at - previous, timedelta(0)) if previous else None))
        previous = max(at, previous) if previous else at
    return tuple(timeline)


def _captured_detail(job: ProcessingJob) -> str:
    """Which document versions the captured input holds."""
    documents = (job.captured or {}).get("documents") or []
    named = ", ".join(f"{path} v{version}" for path, version in documents[:3])
    return f"{named} and {len(documents) - 3} more" if len(documents) > 3 else named


def _submitted_detail(job: ProcessingJob) -> str:
    if job.retry_of_id:
        return f"a retry of {str(job.retry_of_id)[:8]}"
    return ""


def _terminal_detail(job: ProcessingJob) -> str:
    if job.cache_hit:
        return f"reused the result of {str(job.reused_from_id)[:8]}"
    if job.state == JobState.FAILED:
        return f"{job.failure_class}: {job.failure_code}"
    return ""
