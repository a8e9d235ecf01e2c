"""One submission: authorize → reserve (idempotency + admission, job in ``preparing``) → capture → queue.

Each step owns a short transaction; no row lock is held across capture. The
preparing request holds a lease on the job's preparation instead (a column of
the job, since a transaction pooler keeps no session lock across transactions),
so a retry with the same key leaves a preparation still under way alone and
takes over one whose request died once its lease ran out. When no retry comes (the client
got its answer from a replay while the dying request still held the lease), the maintenance
loop fails the job as abandoned (``preparations_abandoned_fail``): capturing the project then
would build what it holds then, edits typed after the click included, which is not what was
asked for; an upload can only come again with a retry, so its job waits for one until its
preparation deadline. A failed preparation fails its job
(``invalid_input`` or ``transient_infrastructure``) so every accepted job
reaches a terminal state.
"""

import hashlib
import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db import Error, IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from access import facade as access
from processing.exceptions import InputTooLarge, InvalidOptions, ProjectTypeUnsupported
from processing.kernel import capabilities, project_outputs
from processing.kernel.blobs import blob_put
from processing.kernel.bundles import canonical_json
from processing.kernel.configuration import Limits, distribution, limits
from processing.kernel.notify import queue_notify
from processing.kernel.transitions import failure_fields, job_transition
from processing.models import FailureClass, JobState, Phase, ProcessingJob
from processing.operations import Operation, operation_get
from processing.submission import reuse
from processing.submission.admission import admission_check
from processing.submission.capture import project_capture
from processing.submission.idempotency import (
    Scope,
    command_digest,
    key_validate,
    reservation_insert,
    reservation_resolve,
)
from processing.submission.pptx_checks import presentation_check
from processing.submission.warm_start import warm_start_choose
from workspace import facade as workspace

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Submitted:
    job_id: uuid.UUID
    replayed: bool


@dataclass(frozen=True)
class Upload:
    data: bytes
    filename: str


def _authorize(operation: Operation, *, actor_id: int, project_id: uuid.UUID | None) -> None:
    if project_id is None:
        return
    access.permission_require(user_id=actor_id, project_id=project_id, permission=operation.permission)
    project = workspace.project_describe(project_id=project_id)
    if project is None:
        raise access.ProjectNotFound()
    if project.type not in operation.project_types:
        raise ProjectTypeUnsupported(details={"operation": operation.name, "project_type": project.type})


def _options(operation: Operation, payload: dict | None) -> tuple[dict, str]:
    """Normalized options (defaults dropped) and the effective input profile, if the operation has one."""
    parsed = operation.options_type.parse(payload)
    profile = getattr(parsed, "input_profile", None)
    if profile is not None:
        declared = distribution().input_profiles.get(operation.name, {})
        if profile not in declared:
            raise InvalidOptions(f"Unknown input profile {profile!r}.", details={"allowed": sorted(declared)})
    return parsed.normalized(), profile or ""


def _reserve(operation: Operation, scope: Scope, fields: dict, limit: Limits) -> Submitted:
    try:
        with transaction.atomic(durable=True):
            reservation = reservation_insert(scope, hours=limit.idempotency_hours)
            if reservation is None:
                raise IntegrityError("the key is held by another request")
            admission_check(
                requester_id=scope.actor_id,
                project_id=fields.get("project_id"),
                limits=limit,
                operation=operation.name,
                superseding=bool(fields["options"].get("supersede")),
            )
            now = timezone.now()
            job = ProcessingJob.objects.create(
                operation=operation.name,
                requester_id=scope.actor_id,
                max_attempts=limit.max_attempts,
                deadline_at=now + timedelta(seconds=limit.preparation_seconds),
                preparation_lease_until=now + timedelta(seconds=limit.preparation_lease_seconds),
                **fields,
            )
            reservation.job = job
            reservation.save(update_fields=["job"])
            return Submitted(job.pk, replayed=False)
    except IntegrityError:
        return Submitted(reservation_resolve(scope).pk, replayed=True)


def job_submit(
    *,
    actor_id: int,
    operation_name: str,
    idempotency_key: str | None,
    project_id: uuid.UUID | None = None,
    options: dict | None = None,
    upload: Upload | None = None,
) -> Submitted:
    """Accept one creation command; returns the job and whether this was an idempotent replay."""
    operation = capabilities.operation_enabled(operation_name)
    key = key_validate(idempotency_key)
    _authorize(operation, actor_id=actor_id, project_id=project_id)
    normalized, profile = _options(operation, options)
    limit = limits()
    if upload is not None:
        _upload_check(operation, upload, limit)
        identity = f"{hashlib.sha256(upload.data).hexdigest()}:{upload.filename}"
    else:
        identity = f"project:{project_id}"
    scope = Scope(
        actor_id,
        operation.endpoint,
        key,
        command_digest(operation=operation.name, project_id=project_id, input_identity=identity, options=normalized),
    )
    fields = {
        "project_id": project_id,
        "options": normalized,
        "options_digest": hashlib.sha256(canonical_json(normalized)).hexdigest(),
        "input_profile": profile,
        "input_filename": upload.filename if upload else "",
    }
    submitted = _reserve(operation, scope, fields, limit)
    # The reserving request leased the preparation with the job; a replay prepares only a job whose lease ran
    # out while it was still preparing (its request died). Preparing twice would be safe anyway (capture reads,
    # blobs are content-addressed, and only the first preparation to lock the job queues it), but it is
    # wasted work, and a lease that ran out under a slow capture costs no more than that.
    if not submitted.replayed or _preparation_taken_over(submitted.job_id, limit):
        try:
            _prepare(operation, submitted.job_id, upload=upload, limit=limit)
        except Exception:
            _preparation_let_go(submitted.job_id)
            raise
        if normalized.get("supersede"):
            queued_builds_supersede(job_id=submitted.job_id)
    return submitted


SUPERSEDED_MESSAGE = "A newer build of the same project replaced this one before it started."


def queued_builds_supersede(*, job_id: uuid.UUID) -> int:
    """End the requester's builds of the project that still wait in the queue, older than ``job_id``, as
    ``cancelled`` with the code ``superseded``: no worker's time goes to text that has changed since. A build
    already running is left to finish (the newer one waits its turn behind it)."""
    job = ProcessingJob.objects.only("project_id", "requester_id", "operation", "created_at").get(pk=job_id)
    waiting = ProcessingJob.objects.filter(
        project_id=job.project_id,
        requester_id=job.requester_id,
        operation=job.operation,
        state=JobState.QUEUED,
        created_at__lt=job.created_at,
    ).values_list("pk", flat=True)
    superseded = 0
    for older in waiting:
        superseded += job_transition(
            job_id=older,
            to=JobState.CANCELLED,
            only_from={JobState.QUEUED},
            failure_code="superseded",
            failure_message=SUPERSEDED_MESSAGE,
        )
    return superseded


ABANDONED_MESSAGE = (
    "The request that asked for this job ended before the project's files were captured, so it did not run "
    "(capturing them now could include changes made after you asked). Start it again."
)


def preparations_abandoned_fail(batch: int = 50) -> int:
    """Fail the project jobs whose preparing request died and that no retry took over, once their lease ran out
    (the maintenance loop's step): what the request meant to capture is gone with it. The lease is taken as a
    retry takes it, so a late retry and the loop end each job once: prepared by the one, or failed by the other."""
    limit = limits()
    stale = ProcessingJob.objects.filter(
        state=JobState.PREPARING, project_id__isnull=False, preparation_lease_until__lt=timezone.now()
    )
    failed = 0
    for job_id, name in stale.order_by("created_at").values_list("pk", "operation")[:batch]:
        operation = operation_get(name)
        if operation is None or not operation.captures_project or not _preparation_taken_over(job_id, limit):
            continue
        logger.warning("failing an abandoned preparation", extra={"job": str(job_id), "operation": name})
        _fail(job_id, FailureClass.TRANSIENT_INFRASTRUCTURE, "preparation_abandoned", ABANDONED_MESSAGE)
        failed += 1
    return failed


def _preparation_taken_over(job_id: uuid.UUID, limit: Limits) -> bool:
    now = timezone.now()
    lease_over = Q(preparation_lease_until__lt=now) | Q(preparation_lease_until__isnull=True)
    taken = ProcessingJob.objects.filter(lease_over, pk=job_id, state=JobState.PREPARING).update(
        preparation_lease_until=now + timedelta(seconds=limit.preparation_lease_seconds)
    )
    return bool(taken)


def _preparation_let_go(job_id: uuid.UUID) -> None:
    """A preparation that broke off (its failure could not even be recorded) ends its lease, so the client's
    retry takes the job over at once; with the database out of reach this fails too, and the lease runs out."""
    try:
        ProcessingJob.objects.filter(pk=job_id, state=JobState.PREPARING).update(preparation_lease_until=None)
    except Error:  # the connection itself may be gone (InterfaceError), not only the database
        logger.warning("a broken-off preparation keeps its lease until it runs out", extra={"job": str(job_id)})


def _upload_check(operation: Operation, upload: Upload, limit: Limits) -> None:
    if len(upload.data) > limit.input_bytes:
        raise InputTooLarge(details={"limit_bytes": limit.input_bytes})
    if operation.input_schema == "pptx-input/v1":
        presentation_check(upload.data)


def _prepare(operation: Operation, job_id: uuid.UUID, *, upload: Upload | None, limit: Limits) -> None:
    """Capture or store the input, then queue (or satisfy from reuse). Failures fail the job."""
    job = ProcessingJob.objects.get(pk=job_id)
    captured: dict = {}
    try:
        if upload is not None:
            data = upload.data
        else:
            capture = project_capture(
                project_id=job.project_id,
                compiler_override=job.options.get("compiler"),
                version=job.options.get("version"),
            )
            data, captured = capture.bundle.data, capture.captured
        if len(data) > limit.input_bytes:
            _fail(
                job_id,
                FailureClass.INVALID_INPUT,
                "input_too_large",
                "The captured input exceeds the size limit.",
            )
            return
        digest = hashlib.sha256(data).hexdigest()
        blob_id = blob_put(data, sha256=digest)
    except (workspace.WorkspaceError, access.ProjectNotFound) as exc:
        _fail(job_id, FailureClass.INVALID_INPUT, getattr(exc, "code", "invalid_input"), str(exc))
        return
    except Exception:
        logger.exception("preparation failed", extra={"job": str(job_id), "operation": operation.name})
        _fail(job_id, FailureClass.TRANSIENT_INFRASTRUCTURE, "preparation_failed", "Capturing the input failed.")
        return
    job_queue_or_reuse(operation, job_id, blob_id=blob_id, input_digest=digest, limit=limit, captured=captured)


def _fail(job_id: uuid.UUID, failure_class: str, code: str, message: str) -> None:
    job_transition(job_id=job_id, to=JobState.FAILED, **failure_fields(failure_class, code, message))


def job_queue_or_reuse(
    operation: Operation,
    job_id: uuid.UUID,
    *,
    blob_id: int,
    input_digest: str,
    limit: Limits,
    captured: dict | None = None,
):
    """Make a prepared job claimable (and wake idle workers), or finish it from a reusable result.

    A build finished from reuse is its project's output too; that output's files are made ready before the
    transaction (no file I/O under the job's lock), for the source seen then: should another source be found
    under the lock, the job is simply run."""
    source_seen, output = None, None
    prepared = ProcessingJob.objects.get(pk=job_id)
    warm_start_blob_id = warm_start_choose(operation, prepared, captured or {})
    if operation.publishes_output:
        source_seen = reuse.reuse_source(operation, prepared, input_digest)
        output = project_outputs.reused_output_prepared(source_seen) if source_seen is not None else None
    with transaction.atomic():
        job = ProcessingJob.objects.select_for_update().get(pk=job_id)
        if job.state != JobState.PREPARING:
            return  # cancelled or expired while preparing; its input bytes are left to the reaper
        source = reuse.reuse_source(operation, job, input_digest)
        if source is not None and operation.publishes_output and (source_seen is None or source.pk != source_seen.pk):
            source = None
        if source is not None:
            reuse.job_complete_from(job, source, blob_id=blob_id, input_digest=input_digest, captured=captured or {})
            if output is not None:
                job.captured = captured or {}
                files, words = output
                project_outputs.build_output_publish(
                    job, files=files, words=words, diagnostics=source.diagnostics, log=source.diagnostic_log
                )
            return
        now = timezone.now()
        job_transition(
            job_id=job_id,
            to=JobState.QUEUED,
            only_from={JobState.PREPARING},
            input_blob_id=blob_id,
            input_digest=input_digest,
            warm_start_blob_id=warm_start_blob_id,
            captured=captured or {},
            queued_at=now,
            phase=Phase.WAITING_FOR_WORKER,
            deadline_at=now + timedelta(seconds=limit.queue_wait_seconds),
        )
        queue_notify(operation.name)
