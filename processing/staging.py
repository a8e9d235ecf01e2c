"""Staging a claim's outputs: private bytes, checked against the operation's declared roles."""

import hashlib
import uuid

from django.db import transaction

from processing.blobs import blob_put
from processing.claims import db_now
from processing.configuration import limits
from processing.exceptions import OutputRejected
from processing.leases import attempt_current
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


def output_stage(
    *, claim_id: uuid.UUID, role: str, media_type: str, filename: str, data: bytes, expected_sha256: str
) -> StagedOutput:
    """Keep ``data`` as the claim's output for ``role``. Uploading the same bytes again is harmless.

    Bytes are stored before the claim is re-checked; if the claim turns out to be
    lost they stay unreferenced and the reaper removes them.
    """
    attempt = ProcessingAttempt.objects.filter(claim_id=claim_id).first()
    if attempt is None:
        from processing.exceptions import ClaimLost

        raise ClaimLost()
    if len(data) > role_limit(operation=attempt.operation, role=role, media_type=media_type):
        raise OutputRejected("The output is larger than its role allows.", details={"role": role})
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected_sha256:
        raise OutputRejected("The bytes do not match the declared sha256.", details={"role": role})
    blob_id = blob_put(data, sha256=digest)
    with transaction.atomic():
        attempt = attempt_current(claim_id, now=db_now())
        staged, _ = StagedOutput.objects.update_or_create(
            attempt=attempt,
            role=role,
            defaults={
                "media_type": media_type, "filename": filename[:255], "size_bytes": len(data),
                "sha256": digest, "blob_id": blob_id,
            },
        )  # fmt: skip
        return staged
