"""The operations' Core-owned finalizers.

A finalizer runs without locks: it validates the staged outputs (size, digest,
media type, and content where the type allows — a PDF must parse), rechecks
that the requester may still see the result, and returns a ``Publication``:
what to publish, and any work (``before_publish``) that must run in the
publishing transaction.
"""

import hashlib
import io
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from access import facade as access
from processing.models import FailureClass, ProcessingArtifact, StagedOutput
from processing.operations import operation_get
from processing.transitions import JOB_ROW


class FinalizationRejected(Exception):
    def __init__(self, failure_class: str, code: str, message: str):
        super().__init__(message)
        self.failure_class, self.code, self.message = failure_class, code, message


@dataclass(frozen=True)
class PublicationCondition:
    """What must still hold where the publication writes: ``sql`` (with ``params``) on the job's row, checked by
    the publishing statement itself; ``explain()`` raises FinalizationRejected when it no longer holds."""

    sql: str
    params: list
    explain: Callable[[], None]


@dataclass
class Publication:
    """What to publish. ``before_publish(job)`` runs under the job's lock in the publishing transaction and
    returns fields for the job; ``extra`` and those fields land on the job with the artifacts."""

    publish: list[StagedOutput]
    extra: dict = field(default_factory=dict)
    before_publish: Callable | None = None
    condition: PublicationCondition | None = None

    def artifacts_insert_sql(self, attempt) -> tuple[str, list]:
        """The artifacts as an INSERT that writes them only for the job the CTE ``moved`` yields, to go
        along with the terminal transition (``job_transition(..., along=…)``)."""
        table = ProcessingArtifact._meta.db_table
        rows = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(self.publish))
        params = []
        for staged in self.publish:
            params += [uuid.uuid4(), staged.role, staged.media_type, staged.filename, staged.size_bytes,
                       staged.sha256, staged.blob_id]  # fmt: skip
        sql = f"""
            INSERT INTO {table} (id, role, media_type, filename, size_bytes, sha256, blob_id, created_at, job_id,
                                 source_attempt_id)
            SELECT output.id, output.role, output.media_type, output.filename, output.size_bytes, output.sha256,
                   output.blob_id, now(), moved.id, %s
            FROM moved CROSS JOIN (VALUES {rows})
                AS output (id, role, media_type, filename, size_bytes, sha256, blob_id)
        """  # noqa: S608  the table is the model's; every value is a parameter
        return sql, [attempt.pk, *params]


def _contract_violation(code: str, message: str) -> FinalizationRejected:
    return FinalizationRejected(FailureClass.INTERNAL_CONTRACT_VIOLATION, code, message)


def staged_bytes_verified(job, staged: StagedOutput) -> bytes:
    """The staged bytes, checked against the operation's role, size limit and recorded digest."""
    role = operation_get(job.operation).role(staged.role)
    if role is None or staged.media_type not in role.media_types:
        raise _contract_violation("undeclared_output", f"Output {staged.role!r} is not one this operation declares.")
    data = bytes(staged.blob.data)  # read with the staged row when the caller selected it
    if len(data) != staged.size_bytes or len(data) > role.max_bytes:
        raise _contract_violation("output_size", f"Output {staged.role!r} has the wrong size.")
    if hashlib.sha256(data).hexdigest() != staged.sha256:
        raise _contract_violation("output_digest", f"Output {staged.role!r} does not match its digest.")
    if staged.media_type == "application/pdf":
        _pdf_check(staged.role, data)
    return data


def _pdf_check(role: str, data: bytes) -> None:
    from pypdf import PdfReader

    try:
        pages = len(PdfReader(io.BytesIO(data)).pages)
    except Exception as exc:  # pypdf signals malformed input with many exception types, PyPdfError being one
        raise _contract_violation("invalid_pdf", f"Output {role!r} is not a readable PDF.") from exc
    if pages < 1:
        raise _contract_violation("invalid_pdf", f"Output {role!r} has no pages.")


def requester_permission_condition(job) -> PublicationCondition | None:
    """A deleted project or a revoked grant turns staged bytes into nothing visible: decided by the publishing
    statement, so that a grant revoked while the outputs are checked cannot slip in between a separate check and
    the publication. The explanation, read only when that statement refused, says why."""
    operation = operation_get(job.operation)
    if job.project_id is None or operation.permission is None:
        return None
    sql, params = access.permission_held_sql(
        permission=operation.permission, user_sql=f"{JOB_ROW}.requester_id", project_sql=f"{JOB_ROW}.project_id"
    )

    def explain() -> None:
        if not access.permission_check(
            user_id=job.requester_id, project_id=job.project_id, permission=operation.permission
        ):
            raise FinalizationRejected(
                FailureClass.INVALID_INPUT, "access_revoked", "The project was deleted or your access to it ended."
            )

    return PublicationCondition(sql, params, explain=explain)


def publish_artifacts(job, staged: list[StagedOutput]) -> Publication:
    """Builds and exports: publish every staged output as an artifact, while the requester may still see it."""
    for output in staged:
        staged_bytes_verified(job, output)
    return Publication(publish=staged, condition=requester_permission_condition(job))


def provision_imported_project(job, staged: list[StagedOutput]) -> Publication:
    """Imports: revalidate the candidate bundle and provision a new project in the publishing transaction."""
    from processing.finalization.provisioning import bundle_to_prepared_project

    by_role = {output.role: output for output in staged}
    for output in staged:
        staged_bytes_verified(job, output)
    prepared = bundle_to_prepared_project(bytes(by_role["bundle"].blob.data), fallback_name=job.input_filename)

    def provision(locked_job) -> dict:
        from workspace import facade as workspace

        project_id = workspace.provision_commit(prepared=prepared, owner_id=locked_job.requester_id)
        return {"result_project_id": project_id}

    return Publication(publish=staged, before_publish=provision)


def index_library_version(job, staged: list[StagedOutput]) -> Publication:
    """PDF ingestion: index the version's pages; advance the searchable version if still requested."""
    from processing.library_index import index_publication

    return index_publication(job, staged, verify=staged_bytes_verified)
