"""Admission limits, checked inside the reservation transaction.

Per-requester and per-project counts are made exact by transaction-scoped
advisory locks (taken in that order); the global queue limit is a bounded count.
"""

from django.db import connection

from processing.advisory import advisory_key
from processing.configuration import Limits
from processing.exceptions import QueueFull, TooManyActiveJobs
from processing.models import JobState, ProcessingJob


def _lock(namespace: str, value) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [advisory_key(namespace, value)])


def _count_reaches(queryset, limit: int) -> bool:
    return queryset.values("pk")[:limit].count() >= limit


def admission_check(*, requester_id: int, project_id, limits: Limits) -> None:
    """Raise QueueFull (503) or TooManyActiveJobs (429) with Retry-After; joins the caller's transaction."""
    _lock("requester", requester_id)
    if project_id is not None:
        _lock("project", project_id)
    if _count_reaches(ProcessingJob.objects.filter(state=JobState.QUEUED), limits.queued_jobs_global):
        raise QueueFull(headers={"Retry-After": "30"}, details={"limit": limits.queued_jobs_global})
    if _count_reaches(
        ProcessingJob.objects.active().filter(requester_id=requester_id), limits.active_jobs_per_requester
    ):
        raise TooManyActiveJobs(
            "You already have the most active jobs allowed; retry when some finish.",
            headers={"Retry-After": "10"},
            details={"scope": "requester", "limit": limits.active_jobs_per_requester},
        )
    if project_id is not None and _count_reaches(
        ProcessingJob.objects.active().filter(project_id=project_id), limits.active_jobs_per_project
    ):
        raise TooManyActiveJobs(
            "This project already has the most active jobs allowed; retry when some finish.",
            headers={"Retry-After": "10"},
            details={"scope": "project", "limit": limits.active_jobs_per_project},
        )
