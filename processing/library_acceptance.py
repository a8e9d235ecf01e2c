"""Accepting a PDF version into a project's library (seed 002; architecture §9).

Before the transaction: authorize, validate the PDF and store its bytes as a
processing blob (a refused or rolled-back acceptance leaves only bytes the blob
reaper removes after its grace period). Then **one transaction on one
connection**:

1. insert the scoped submission identity bound to the command digest;
2. insert the version (referencing the stored bytes);
3. ``UPDATE … WHERE revision = :expected RETURNING`` — exactly one row, or roll back (412);
   then admission (429/503 roll back too);
4. insert the ``pdf.index.text/v1`` job, already ``queued`` (NOTIFY is delivered on commit);
5. insert the outbox event ``document.version.accepted``;
6. record the outcome (the identity names the job; the version names the job too);

commit, and only then answer. No broker or processor is called inside. A
duplicate identity rolls back and resolves the original outcome in a fresh
transaction: a retry gets the original version and job.
"""

import hashlib
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from prometheus_client import Counter

from access import facade as access
from processing import capabilities
from processing.blobs import blob_put
from processing.bundles import canonical_json
from processing.configuration import limits
from processing.exceptions import RevisionMismatch
from processing.library_input import PdfFacts, filename_clean, pdf_inspect, title_choose
from processing.models import JobState, Phase, ProcessingJob
from processing.notify import queue_notify
from processing.outbox import outbox_emit
from processing.submission.admission import admission_check
from processing.submission.idempotency import (
    Scope,
    command_digest,
    key_validate,
    reservation_insert,
    reservation_resolve,
)
from workspace import facade as workspace

OPERATION = "pdf.index.text/v1"
ACCEPTED_EVENT = "document.version.accepted"

# Per server process (seed 002 asks to observe rejected revisions and replayed submissions).
acceptance_outcomes = Counter("quire_library_acceptances_total", "Library version acceptances by outcome.", ["outcome"])


@dataclass(frozen=True)
class VersionUpload:
    """One acceptance command: a new document (``document_id`` None) or a replacement at ``expected_revision``."""

    project_id: uuid.UUID
    document_id: uuid.UUID | None
    expected_revision: int | None
    data: bytes
    filename: str = ""
    title: str | None = None


@dataclass(frozen=True)
class Accepted:
    document_id: uuid.UUID
    version_id: uuid.UUID
    job_id: uuid.UUID
    replayed: bool


class _KeyHeld(Exception):
    """The submission identity exists already: roll back and resolve it."""


class _Stale(Exception):
    """The conditional update matched no row: roll back everything."""


@dataclass(frozen=True)
class _Prepared:
    upload: VersionUpload
    scope: Scope
    facts: PdfFacts
    filename: str
    title: str | None
    sha256: str
    blob_id: int


def library_version_accept(*, actor_id: int, idempotency_key: str | None, upload: VersionUpload) -> Accepted:
    """Accept a PDF version; raises 4xx errors for refusals and RevisionMismatch (412) for a stale revision."""
    operation = capabilities.operation_enabled(OPERATION)
    key = key_validate(idempotency_key)
    access.permission_require(user_id=actor_id, project_id=upload.project_id, permission=operation.permission)
    if upload.document_id is not None:
        workspace.library_document_describe(project_id=upload.project_id, document_id=upload.document_id)
    prepared = _prepare(actor_id, key, upload, endpoint=operation.endpoint)
    try:
        accepted = _accept_in_one_transaction(actor_id, prepared)
    except (_KeyHeld, IntegrityError):
        # The identity exists (or a unique constraint was raced): the database arbitrated.
        acceptance_outcomes.labels(outcome="key_held").inc()  # a replay, or 409 for other bytes
        return _resolved(prepared.scope)
    except _Stale:
        acceptance_outcomes.labels(outcome="revision_conflict").inc()
        raise _stale_error(upload) from None
    acceptance_outcomes.labels(outcome="accepted").inc()
    return accepted


def _prepare(actor_id: int, key: str, upload: VersionUpload, *, endpoint: str) -> _Prepared:
    """Validate the PDF, bind the command, and store the bytes — all before the transaction."""
    facts = pdf_inspect(upload.data)
    filename = filename_clean(upload.filename)
    explicit = workspace.library_title_clean(title=upload.title)
    title = title_choose(explicit=explicit, facts=facts, filename=filename) if upload.document_id is None else explicit
    sha256 = hashlib.sha256(upload.data).hexdigest()
    target = f"document:{upload.document_id}@{upload.expected_revision}" if upload.document_id else "new-document"
    identity = f"{target}:{sha256}:{title or ''}"
    digest = command_digest(operation=OPERATION, project_id=upload.project_id, input_identity=identity, options={})
    # The scope is (actor, operation endpoint within this project, key).
    scope = Scope(actor_id, f"{endpoint}:{upload.project_id}", key, digest)
    blob_id = blob_put(upload.data, sha256=sha256)
    return _Prepared(upload, scope, facts, filename, title, sha256, blob_id)


def _accept_in_one_transaction(actor_id: int, prepared: _Prepared) -> Accepted:
    upload, limit = prepared.upload, limits()
    with transaction.atomic(durable=True):
        reservation = reservation_insert(prepared.scope, hours=limit.idempotency_hours)
        if reservation is None:
            raise _KeyHeld()
        document_id = upload.document_id or workspace.library_document_open(
            project_id=upload.project_id, title=prepared.title, created_by_id=actor_id
        )
        expected = upload.expected_revision if upload.document_id else 0
        job_id = uuid.uuid4()
        version = workspace.library_version_insert(
            document_id=document_id, number=expected + 1, new=_new_version(actor_id, prepared, job_id)
        )
        revision = workspace.library_request_advance(
            project_id=upload.project_id, document_id=document_id, version_id=version.id,
            expected_revision=expected, title=prepared.title,
        )  # fmt: skip
        if revision is None:
            raise _Stale()
        # After the document gate: contenders for one document meet at its row, not at admission's locks.
        admission_check(requester_id=actor_id, project_id=upload.project_id, limits=limit)
        job = _job_queue(job_id, actor_id, prepared, limit)
        outbox_emit(kind=ACCEPTED_EVENT, payload=_event_payload(upload.project_id, document_id, version, job))
        reservation.job = job
        reservation.save(update_fields=["job"])
    return Accepted(document_id, version.id, job.pk, replayed=False)


def _new_version(actor_id: int, prepared: _Prepared, job_id: uuid.UUID):
    return workspace.LibraryNewVersion(
        pdf_blob_id=prepared.blob_id, sha256=prepared.sha256, size_bytes=len(prepared.upload.data),
        page_count=prepared.facts.page_count, filename=prepared.filename, uploaded_by_id=actor_id,
        index_job_id=job_id,
    )  # fmt: skip


def _job_queue(job_id: uuid.UUID, actor_id: int, prepared: _Prepared, limit) -> ProcessingJob:
    """Insert the indexing job directly in ``queued``: its input is already durable, nothing to capture."""
    now = timezone.now()
    job = ProcessingJob.objects.create(
        id=job_id, operation=OPERATION, requester_id=actor_id, project_id=prepared.upload.project_id,
        state=JobState.QUEUED, phase=Phase.WAITING_FOR_WORKER, options={},
        options_digest=hashlib.sha256(canonical_json({})).hexdigest(), input_filename=prepared.filename,
        input_blob_id=prepared.blob_id, input_digest=prepared.sha256, max_attempts=limit.max_attempts,
        queued_at=now, deadline_at=now + timedelta(seconds=limit.queue_wait_seconds),
    )  # fmt: skip
    queue_notify(OPERATION)
    return job


def _event_payload(project_id, document_id, version, job) -> dict:
    return {
        "project_id": str(project_id),
        "document_id": str(document_id),
        "version_id": str(version.id),
        "version_number": version.number,
        "job_id": str(job.pk),
    }


def _resolved(scope: Scope) -> Accepted:
    """The original outcome of this identity, read afresh (409 when the key was bound to another command)."""
    job = reservation_resolve(scope)
    version = workspace.library_version_of_job(job_id=job.pk)
    if version is None:
        raise IntegrityError("an accepted submission names a job without a library version")
    return Accepted(version.document_id, version.id, job.pk, replayed=True)


def _stale_error(upload: VersionUpload) -> Exception:
    current = workspace.library_document_revision(project_id=upload.project_id, document_id=upload.document_id)
    if current is None:
        return workspace.LibraryDocumentNotFound(details={"document_id": str(upload.document_id)})
    return RevisionMismatch(
        details={"document_id": str(upload.document_id), "current_revision": current,
                 "expected_revision": upload.expected_revision},
        headers={"ETag": f'"{current}"'},
    )  # fmt: skip
