"""Reads of jobs, always scoped to what the caller may see: their own jobs on projects they can still view."""

import base64
import contextlib
import json
import uuid
from datetime import datetime

from django.db.models import Q

from access import facade as access
from processing.exceptions import InvalidCursor, JobNotFound
from processing.models import INTERNAL_ARTIFACT_ROLES, ProcessingArtifact, ProcessingJob
from processing.models.jobs import ACTIVE_STATES, TERMINAL_STATES

PAGE_SIZE_MAX = 100


def _visible(user_id: int):
    """The caller's jobs on projects they may still view, with the check inside the same query."""
    projects = access.project_ids_permitting(user_id=user_id, permission=access.Permission.VIEW)
    return ProcessingJob.objects.filter(Q(project_id__isnull=True) | Q(project_id__in=projects), requester_id=user_id)


def job_visible(*, user_id: int | None, job_id) -> ProcessingJob:
    """The job if the caller may see it; JobNotFound (404, never 403) otherwise."""
    if not user_id:
        raise JobNotFound()
    try:
        job_uuid = uuid.UUID(str(job_id))
    except ValueError as exc:
        raise JobNotFound() from exc
    job = _visible(user_id).filter(pk=job_uuid).first()
    if job is None:
        raise JobNotFound()
    return job


def artifact_visible(*, user_id: int | None, job_id, artifact_id) -> ProcessingArtifact:
    """The artifact of a job the caller may see, in one query; which 404 it is only when there is none."""
    from processing.exceptions import ArtifactNotFound

    artifact = None
    if user_id:
        with contextlib.suppress(ValueError):
            jobs = _visible(user_id).filter(pk=uuid.UUID(str(job_id)))
            artifact = (
                ProcessingArtifact.objects.filter(job__in=jobs, pk=uuid.UUID(str(artifact_id)))
                .exclude(role__in=INTERNAL_ARTIFACT_ROLES)
                .first()
            )
    if artifact is None:
        job_visible(user_id=user_id, job_id=job_id)  # JobNotFound when the caller has no such job
        raise ArtifactNotFound()
    return artifact


def cursor_encode(job: ProcessingJob) -> str:
    raw = json.dumps([job.created_at.isoformat(), str(job.pk)]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def cursor_decode(cursor: str) -> tuple[datetime, uuid.UUID]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created, job_id = json.loads(raw)
        return datetime.fromisoformat(created), uuid.UUID(job_id)
    except (ValueError, TypeError, AttributeError) as exc:  # AttributeError: a number where text belongs
        raise InvalidCursor() from exc


def jobs_visible_to(
    *,
    user_id: int,
    state: str | None = None,
    project_id: uuid.UUID | None = None,
    operation: str | None = None,
    cursor: str | None = None,
    limit: int = 50,
) -> tuple[list[ProcessingJob], str | None]:
    """A page of the caller's jobs, newest first, and the cursor of the next page."""
    jobs = _visible(user_id)
    if state == "active":
        jobs = jobs.filter(state__in=ACTIVE_STATES)
    elif state == "terminal":
        jobs = jobs.filter(state__in=TERMINAL_STATES)
    if project_id is not None:
        jobs = jobs.filter(project_id=project_id)
    if operation:
        jobs = jobs.filter(operation=operation)
    if cursor:
        created, last_id = cursor_decode(cursor)
        jobs = jobs.filter(Q(created_at__lt=created) | Q(created_at=created, pk__lt=last_id))
    limit = max(1, min(limit, PAGE_SIZE_MAX))
    page = list(jobs.order_by("-created_at", "-pk").prefetch_related("artifacts")[: limit + 1])
    next_cursor = cursor_encode(page[limit - 1]) if len(page) > limit else None
    return page[:limit], next_cursor


def job_counts_visible_to(*, user_id: int, failed_after: datetime) -> tuple[int, int]:
    """(active jobs, jobs that failed after ``failed_after``) among the caller's visible jobs, in one query."""
    from django.db.models import Count

    from processing.models import JobState

    counts = _visible(user_id).aggregate(
        active=Count("pk", filter=Q(state__in=ACTIVE_STATES)),
        failed=Count("pk", filter=Q(state=JobState.FAILED, completed_at__gt=failed_after)),
    )
    return counts["active"], counts["failed"]
