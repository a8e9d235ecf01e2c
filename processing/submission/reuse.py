"""Deterministic result reuse: an exact match of (scope, operation, input digest, contract, options).

Scope is the same project for project operations and the same requester for
imports, never across tenants. The processor contract must be one a live
worker offers now, so a reused result is what running the job again would give.
"""

from django.db.models import Q

from processing.kernel.capabilities import live_contracts
from processing.kernel.transitions import job_transition
from processing.models import JobState, ProcessingArtifact, ProcessingJob
from processing.operations import Operation


def reuse_source(operation: Operation, job: ProcessingJob, input_digest: str) -> ProcessingJob | None:
    if not operation.reusable or job.options.get("clean"):
        return None  # "Recompile from scratch" runs the build itself
    contracts = live_contracts(operation.name)
    if not contracts:
        return None
    scope = Q(project_id=job.project_id) if operation.reuse_scope == "project" else Q(requester_id=job.requester_id)
    return (
        ProcessingJob.objects.filter(
            scope,
            state=JobState.SUCCEEDED,
            operation=operation.name,
            input_digest=input_digest,
            options_digest=job.options_digest,
            processor_contract__in=contracts,
            result_project_id__isnull=True,
        )
        .order_by("-completed_at")
        .first()
    )


def job_complete_from(
    job: ProcessingJob, source: ProcessingJob, *, blob_id: int, input_digest: str, captured: dict | None = None
) -> None:
    """Inside the caller's transaction: a new succeeded job with its own artifact rows and no attempt."""
    for artifact in source.artifacts.all():
        ProcessingArtifact.objects.create(
            job=job,
            role=artifact.role,
            media_type=artifact.media_type,
            filename=artifact.filename,
            size_bytes=artifact.size_bytes,
            sha256=artifact.sha256,
            blob_id=artifact.blob_id,
            source_attempt_id=artifact.source_attempt_id,
        )
    job_transition(
        job_id=job.pk,
        to=JobState.SUCCEEDED,
        only_from={JobState.PREPARING},
        input_blob_id=blob_id,
        input_digest=input_digest,
        captured=captured or {},
        cache_hit=True,
        reused_from_id=source.pk,
        processor_contract=source.processor_contract,
        diagnostic_log=source.diagnostic_log,
        diagnostics=source.diagnostics,
    )
