"""Accepting a PDF version into a project's library (seed 002; docs/architecture.md §11).

Before the transaction: authorize, validate the PDF and store its bytes as a
processing blob (a refused or rolled-back acceptance leaves only bytes the blob
reaper removes after its grace period). Then **one transaction on one
connection**:

1. insert the scoped submission identity bound to the command digest;
2. insert the version (referencing the stored bytes);
3. ``UPDATE … WHERE revision = :expected RETURNING`` — exactly one row, or roll back (412);
   then admission (429/503 roll back too);
4. insert the ``pdf.index.text/v1`` job through Processing's facade, already ``queued`` (NOTIFY is
   delivered on commit), and record the outcome (the identity names the job; the version names it too);
5. insert the outbox event ``document.version.accepted``;

commit, and only then answer. No broker or processor is called inside. A
duplicate identity rolls back and resolves the original outcome in a fresh
transaction: a retry gets the original version and job.
"""

import hashlib
import uuid
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from prometheus_client import Counter, Histogram

from access import facade as access
from library import selectors
from library.exceptions import LibraryDocumentNotFound, RevisionMismatch
from library.services.documents import NewVersion, document_open, request_advance, title_clean, version_insert
from library.services.pdf_checks import PdfFacts, filename_clean, pdf_inspect, title_choose
from processing import facade as processing

OPERATION = "pdf.index.text/v1"
ACCEPTED_EVENT = "document.version.accepted"

# Per server process (seed 002 asks to observe rejected revisions and replayed submissions).
acceptance_outcomes = Counter("quire_library_acceptances_total", "Library version acceptances by outcome.", ["outcome"])
# Contention, observable: contenders for one document meet at its request row's lock in the conditional update
# (the gate), so the gate's time is that lock's wait; the transaction's time is everything it holds locks for.
_CONTENTION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
acceptance_transaction_seconds = Histogram(
    "quire_library_acceptance_transaction_seconds",
    "Time of an acceptance's transaction, from its first statement to its commit or rollback.",
    buckets=_CONTENTION_BUCKETS,
)
acceptance_gate_seconds = Histogram(
    "quire_library_acceptance_gate_wait_seconds",
    "Time of the document's conditional revision update, where contenders for one document wait on its row lock.",
    buckets=_CONTENTION_BUCKETS,
)


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
    scope: processing.SubmissionScope
    facts: PdfFacts
    filename: str
    title: str | None
    sha256: str
    blob_id: int


def library_version_accept(*, actor_id: int, idempotency_key: str | None, upload: VersionUpload) -> Accepted:
    """Accept a PDF version; raises 4xx errors for refusals and RevisionMismatch (412) for a stale revision."""
    operation = processing.operation_enabled(OPERATION)
    key = processing.idempotency_key_validate(idempotency_key)
    access.permission_require(user_id=actor_id, project_id=upload.project_id, permission=operation.permission)
    if upload.document_id is not None:
        selectors.document_describe(project_id=upload.project_id, document_id=upload.document_id)
    prepared = _prepare(actor_id, key, upload, endpoint=operation.endpoint)
    try:
        accepted = _accept_in_one_transaction(actor_id, prepared)
    except (_KeyHeld, IntegrityError):
        # The identity exists (or a unique constraint was raced): the database arbitrated.
        try:
            resolved = _resolved(prepared.scope)
        except Exception as exc:
            # The earlier request's outcome is not known yet (its client is told to retry), or a 409.
            unresolved = getattr(exc, "code", "") == "outcome_unresolved"
            acceptance_outcomes.labels(outcome="outcome_unresolved" if unresolved else "key_held").inc()
            raise
        acceptance_outcomes.labels(outcome="key_held").inc()  # a replay, or 409 for other bytes
        return resolved
    except _Stale:
        acceptance_outcomes.labels(outcome="revision_conflict").inc()
        raise _stale_error(upload) from None
    acceptance_outcomes.labels(outcome="accepted").inc()
    return accepted


def _prepare(actor_id: int, key: str, upload: VersionUpload, *, endpoint: str) -> _Prepared:
    """Validate the PDF, bind the command, and store the bytes — all before the transaction."""
    facts = pdf_inspect(upload.data)
    filename = filename_clean(upload.filename)
    explicit = title_clean(upload.title)
    title = title_choose(explicit=explicit, facts=facts, filename=filename) if upload.document_id is None else explicit
    sha256 = hashlib.sha256(upload.data).hexdigest()
    target = f"document:{upload.document_id}@{upload.expected_revision}" if upload.document_id else "new-document"
    identity = f"{target}:{sha256}:{title or ''}"
    digest = processing.command_digest(
        operation=OPERATION, project_id=upload.project_id, input_identity=identity, options={}
    )
    # The scope is (actor, operation endpoint within this project, key).
    scope = processing.SubmissionScope(actor_id, f"{endpoint}:{upload.project_id}", key, digest)
    blob_id = processing.blob_put(upload.data, sha256=sha256)
    return _Prepared(upload, scope, facts, filename, title, sha256, blob_id)


def _accept_in_one_transaction(actor_id: int, prepared: _Prepared) -> Accepted:
    with acceptance_transaction_seconds.time():
        return _accept_transaction(actor_id, prepared)


def _accept_transaction(actor_id: int, prepared: _Prepared) -> Accepted:
    upload = prepared.upload
    with transaction.atomic(durable=True):
        reservation = processing.stored_input_reserve(scope=prepared.scope)
        if reservation is None:
            raise _KeyHeld()
        document_id = upload.document_id or document_open(
            project_id=upload.project_id, title=prepared.title, created_by_id=actor_id
        )
        expected = upload.expected_revision if upload.document_id else 0
        job_id = uuid.uuid4()
        version = version_insert(
            document_id=document_id, number=expected + 1, new=_new_version(actor_id, prepared, job_id)
        )
        with acceptance_gate_seconds.time():
            revision = request_advance(
                project_id=upload.project_id,
                document_id=document_id,
                version_id=version.id,
                expected_revision=expected,
                title=prepared.title,
            )
        if revision is None:
            raise _Stale()
        # Admission comes after the document gate: contenders for one document meet at its row, not at
        # admission's locks. The job is inserted already ``queued`` (its input is durable) and bound to the
        # submission identity; NOTIFY is delivered on commit.
        processing.stored_input_job_queue(
            reservation=reservation,
            job_id=job_id,
            operation=OPERATION,
            requester_id=actor_id,
            project_id=upload.project_id,
            stored=processing.StoredInput(prepared.blob_id, prepared.sha256, prepared.filename),
        )
        processing.outbox_emit(
            kind=ACCEPTED_EVENT, payload=_event_payload(upload.project_id, document_id, version, job_id)
        )
    return Accepted(document_id, version.id, job_id, replayed=False)


def _new_version(actor_id: int, prepared: _Prepared, job_id: uuid.UUID) -> NewVersion:
    return NewVersion(
        pdf_blob_id=prepared.blob_id,
        sha256=prepared.sha256,
        size_bytes=len(prepared.upload.data),
        page_count=prepared.facts.page_count,
        filename=prepared.filename,
        uploaded_by_id=actor_id,
        index_job_id=job_id,
    )


def _event_payload(project_id, document_id, version, job_id) -> dict:
    return {
        "project_id": str(project_id),
        "document_id": str(document_id),
        "version_id": str(version.id),
        "version_number": version.number,
        "job_id": str(job_id),
    }


def _resolved(scope) -> Accepted:
    """The original outcome of this identity, read afresh (409 when the key was bound to another command)."""
    job_id = processing.stored_input_resolve(scope=scope)
    version = selectors.version_of_job(job_id=job_id)
    if version is None:
        raise IntegrityError("an accepted submission names a job without a library version")
    return Accepted(version.document_id, version.id, job_id, replayed=True)


def _stale_error(upload: VersionUpload) -> Exception:
    current = selectors.document_revision(project_id=upload.project_id, document_id=upload.document_id)
    if current is None:
        return LibraryDocumentNotFound(details={"document_id": str(upload.document_id)})
    return RevisionMismatch(
        details={
            "document_id": str(upload.document_id),
            "current_revision": current,
            "expected_revision": upload.expected_revision,
        },
        headers={"ETag": f'"{current}"'},
    )
