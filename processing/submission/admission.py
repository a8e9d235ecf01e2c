"""Admission limits, checked inside the reservation transaction.

Per-requester and per-project counts of active jobs are kept per partition (processing/kernel/partitions.py: builds
and library indexing do not share a quota) and made exact by transaction-scoped advisory locks (taken in that
order); the global queue limit is a bounded count.
"""

from django.db import connection
from django.db.models import Q

from processing.exceptions import QueueFull, TooManyActiveJobs
from processing.kernel.advisory import advisory_key
from processing.kernel.configuration import Limits, deployment
from processing.models import JobState, ProcessingJob


def _lock(namespace: str, value) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [advisory_key(namespace, value)])


def _count_reaches(queryset, limit: int) -> bool:
    return queryset.values("pk")[:limit].count() >= limit


def admission_check(
    *, requester_id: int, project_id, limits: Limits, operation: str, superseding: bool = False
) -> None:
    """Raise QueueFull (503) or TooManyActiveJobs (429) with Retry-After; joins the caller's transaction.

    ``superseding``: the command replaces the requester's queued jobs of this project and operation, so they are
    not counted against it (they end as ``superseded`` once it is accepted)."""
    _lock("requester", requester_id)
    if project_id is not None:
        _lock("project", project_id)
    replaced = Q(state=JobState.QUEUED, requester_id=requester_id, project_id=project_id, operation=operation)
    queued = ProcessingJob.objects.filter(state=JobState.QUEUED)
    if superseding:
        queued = queued.exclude(replaced)
    if _count_reaches(queued, limits.queued_jobs_global):
        raise QueueFull(headers={"Retry-After": "30"}, details={"limit": limits.queued_jobs_global})
    partition = deployment().partition_of(operation)
    active = ProcessingJob.objects.active().in_partition(partition)
    if superseding:
        active = active.exclude(replaced)
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
