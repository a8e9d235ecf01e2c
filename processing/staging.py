"""Staging a claim's outputs: private bytes, checked against the operation's declared roles."""

import hashlib
import uuid

from django.db import connection

from processing.blobs import blob_put
from processing.configuration import limits
from processing.exceptions import ClaimLost, OutputRejected
from processing.models import ProcessingAttempt, StagedOutput
from processing.operations import operation_get


def role_limit(*, operation: str, role: str, media_type: str) -> int:
    """The byte limit for a declared role and media type, or OutputRejected."""
    op = operation_get(operation)
    declared = op.role(role) if op else None
    if declared is None:
        raise OutputRejected(f"{operation} declares no output role {role!r}.", details={"role": role})
    if media_type not in declared.media_types:
        raise OutputRejected(
            f"Role {role!r} takes {', '.join(declared.media_types)}.",
            details={"role": role, "media_type": media_type},
        )
    return min(declared.max_bytes, limits().artifact_bytes)


# Stage under the claim only while it is current (database time), in one statement; the same role
# uploaded again replaces the earlier bytes.
_STAGE_SQL = """
    INSERT INTO processing_stagedoutput
        (attempt_id, role, media_type, filename, size_bytes, sha256, blob_id, created_at)
    SELECT attempt.id, %(role)s, %(media_type)s, %(filename)s, %(size)s, %(sha256)s, %(blob)s, now()
    FROM processing_processingattempt AS attempt
    JOIN processing_processingjob AS job ON job.id = attempt.job_id
    WHERE attempt.claim_id = %(claim)s AND attempt.state = 'running' AND attempt.lease_expires_at > now()
      AND job.state = 'running'
    ON CONFLICT (attempt_id, role) DO UPDATE SET media_type = EXCLUDED.media_type, filename = EXCLUDED.filename,
        size_bytes = EXCLUDED.size_bytes, sha256 = EXCLUDED.sha256, blob_id = EXCLUDED.blob_id
    RETURNING id, attempt_id, created_at
"""


def output_stage(
    *, claim_id: uuid.UUID, role: str, media_type: str, filename: str, data: bytes, expected_sha256: str
) -> StagedOutput:
    """Keep ``data`` as the claim's output for ``role``. Uploading the same bytes again is harmless.

    Bytes are stored before the claim is re-checked; if the claim turns out to be
    lost they stay unreferenced and the reaper removes them.
    """
    operation = ProcessingAttempt.objects.filter(claim_id=claim_id).values_list("operation", flat=True).first()
    if operation is None:
        raise ClaimLost()
    if len(data) > role_limit(operation=operation, role=role, media_type=media_type):
        raise OutputRejected("The output is larger than its role allows.", details={"role": role})
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected_sha256:
        raise OutputRejected("The bytes do not match the declared sha256.", details={"role": role})
    blob_id = blob_put(data, sha256=digest)
    fields = {"role": role, "media_type": media_type, "filename": filename[:255], "size_bytes": len(data),
              "sha256": digest, "blob_id": blob_id}  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(_STAGE_SQL, {**fields, "size": len(data), "blob": blob_id, "claim": claim_id})
        row = cursor.fetchone()
    if row is None:
        raise ClaimLost()
    staged_id, attempt_id, created_at = row
    return StagedOutput(id=staged_id, attempt_id=attempt_id, created_at=created_at, **fields)
