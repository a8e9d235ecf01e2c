"""Warm starts (docs/architecture.md §9): a LaTeX build starts from the auxiliary files of the requester's
previous successful build of the same project, entry file and compiler, so that latexmk runs only the passes the
change needs.

Those files are the earlier build's ``warm`` result, an immutable blob; the job records which one it starts from
when it is queued (``ProcessingJob.warm_start_blob``), so every attempt of the job reads the same input and the
job stays a function of what it captured. The worker proves the warm build equivalent to a clean one or builds
again from scratch; reuse of identical content is unchanged, since either way the PDF is the same bytes.

Scope: the requester's own builds of the same project, never another project's or another member's. The claim
checks the scope again before it offers the file (``warm_start_offered``), so a job that names a blob out of its
scope (written by hand, or left from a move) simply starts clean.
"""

import uuid
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q

from processing.models import JobState, ProcessingArtifact, ProcessingJob
from processing.operations import Operation

WARM_ROLE = "warm"


def warm_start_choose(operation: Operation, job: ProcessingJob, captured: dict) -> int | None:
    """The blob of the newest warm start this job may start from, or None (a clean build)."""
    if not operation.warm_starts or job.options.get("clean") or job.options.get("version") is not None:
        return None
    build = captured.get("build")
    if not build:
        return None
    return (
        ProcessingArtifact.objects.filter(
            _in_scope(job.project_id, job.requester_id, job.operation), job__captured__build=build
        )
        .order_by("-job__completed_at")
        .values_list("blob_id", flat=True)
        .first()
    )


def _in_scope(project_id, requester_id, operation) -> Q:
    """The ``warm`` artifacts of succeeded current-files builds by this requester of this project and operation."""
    return Q(
        role=WARM_ROLE,
        job__project_id=project_id,
        job__requester_id=requester_id,
        job__operation=operation,
        job__state=JobState.SUCCEEDED,
    ) & ~Q(job__options__has_key="version")


@dataclass(frozen=True)
class OfferedWarmStart:
    blob_id: int
    sha256: str
    size: int


def warm_start_offered(job_id: uuid.UUID) -> OfferedWarmStart | None:
    """The warm start a claim of this job offers its worker: the job's, if it is still one of the requester's
    own warm results of the same project. One query, on the claim's path."""
    in_scope = ProcessingArtifact.objects.filter(
        _in_scope(OuterRef("project_id"), OuterRef("requester_id"), OuterRef("operation")),
        blob_id=OuterRef("warm_start_blob_id"),
    )
    row = (
        ProcessingJob.objects.filter(Exists(in_scope), pk=job_id, warm_start_blob__isnull=False)
        .values_list("warm_start_blob_id", "warm_start_blob__sha256", "warm_start_blob__size_bytes")
        .first()
    )
    return OfferedWarmStart(*row) if row else None
