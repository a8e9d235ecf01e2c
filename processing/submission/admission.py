"""Admission limits, checked inside the reservation transaction.

Per-requester and per-project counts of active jobs are kept per partition (processing/partitions.py: builds
and library indexing do not share a quota) and made exact by transaction-scoped advisory locks (taken in that
order); the global queue limit is a bounded count.
"""

from django.db import connection

from processing.advisory import advisory_key
from processing.configuration import Limits, deployment
from processing.exceptions import QueueFull, TooManyActiveJobs
from processing.models import JobState, ProcessingJob


def _lock(namespace: str, value) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [advisory_key(namespace, value)])


def _count_reaches(queryset, limit: int) -> bool:
    return queryset.values("pk")[:limit].count() >= limit


def admission_check(*, requester_id: int, project_id, limits: Limits, operation: str) -> None:
    """Raise QueueFull (503) or TooManyActiveJobs (429) with Retry-After; joins the caller's transaction."""
    _lock("requester", requester_id)
    if project_id is not None:
        _lock("project", project_id)
    if _count_reaches(ProcessingJob.objects.filter(state=JobState.QUEUED), limits.queued_jobs_global):
        raise QueueFull(headers={"Retry-After": "30"}, details={"limit": limits.queued_jobs_global})
    partition = deployment().partition_of(operation)
    active = ProcessingJob.objects.active().in_partition(partition)
    if _count_reaches(active.filter(requester_id=requester_id), partition.active_jobs_per_requester):
        raise TooManyActiveJobs(
            "You already have the most active jobs allowed; retry when some finish.",
            headers={"Retry-After": "10"},
            details={"scope": "requester", "partition": partition.name, "limit": partition.active_jobs_per_requester},
        )
    if project_id is not None and _count_reaches(
        active.filter(project_id=project_id), partition.active_jobs_per_project
    ):
        raise TooManyActiveJobs(
            "This project already has the most active jobs allowed; retry when some finish.",
            headers={"Retry-After": "10"},
            details={"scope": "project", "partition": partition.name, "limit": partition.active_jobs_per_project},
        )
