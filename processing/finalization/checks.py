"""Checks every finalizer runs on staged outputs: the declared role, size, digest and content, and whether
the requester may still see the result when it is published."""

import hashlib
import io

from access import facade as access
from processing.finalization.publication import FinalizationRejected, PublicationCondition
from processing.kernel.transitions import JOB_ROW
from processing.models import FailureClass, StagedOutput
from processing.operations import operation_get


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
