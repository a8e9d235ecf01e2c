"""Staging a claim's outputs: private bytes, checked against the operation's declared roles."""

import hashlib
import json
import uuid
from functools import lru_cache
from typing import NoReturn

from foundation.database.prepared import prepared_cursor
from processing.exceptions import OutputRejected
from processing.kernel.configuration import limits
from processing.models import StagedOutput
from processing.operations import REGISTRY, operation_get
from processing.queue.leases import CLAIM_CURRENT_SQL, attempt_current


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


def role_limits_all() -> dict[str, dict[str, dict[str, int]]]:
    """Operation → role → media type → byte limit (``role_limit``'s answer for each): every output any operation
    takes, for a statement that checks an output against its claim's operation itself."""
    return _role_limits_all(limits().artifact_bytes)


@lru_cache(maxsize=4)
def _role_limits_all(artifact_bytes: int) -> dict[str, dict[str, dict[str, int]]]:
    return {
        name: {
            role.role: dict.fromkeys(role.media_types, min(role.max_bytes, artifact_bytes)) for role in op.result_roles
        }
        for name, op in REGISTRY.items()
    }


def role_limits_accepting(*, role: str, media_type: str, size: int) -> dict[str, int]:
    """Operation → byte limit of ``role``, for the operations whose outputs may be ``size`` bytes of
    ``media_type`` in ``role``: what a statement fenced by the claim checks the claim's operation against."""
    accepting = {}
    for operation, roles in role_limits_all().items():
        limit = roles.get(role, {}).get(media_type)
        if limit is not None and 0 <= size <= limit:
            accepting[operation] = limit
    return accepting


# The claim's attempt, only while the claim is current and only if its operation is one of %(accepting)s
# (operation → byte limit, from role_limits_accepting): what staging and upload tickets are fenced by.
CURRENT_ACCEPTING_ATTEMPT_SQL = f"""
    FROM processing_processingattempt AS attempt
    JOIN processing_processingjob AS job ON job.id = attempt.job_id
    WHERE attempt.claim_id = %(claim)s AND {CLAIM_CURRENT_SQL} AND %(accepting)s::jsonb ? attempt.operation
"""


def staging_sql(attempt_sql: str) -> str:
    """Stage in one statement, for the attempt (``id``, ``role``, ``media_type``, ``filename``) that
    ``attempt_sql`` selects, if any: the blob is stored (or touched) only when the staged row is written too, so a
    refused upload leaves nothing behind. The same role uploaded again replaces the earlier bytes."""
    return f"""
    WITH attempt AS ({attempt_sql}), blob AS (
        INSERT INTO processing_processingblob (sha256, size_bytes, data, created_at, touched_at)
        SELECT %(sha256)s, %(size)s, %(data)s, now(), now() WHERE EXISTS (SELECT 1 FROM attempt)
        ON CONFLICT (sha256, size_bytes) DO UPDATE SET touched_at = now()
        RETURNING id
    )
    INSERT INTO processing_stagedoutput
        (attempt_id, role, media_type, filename, size_bytes, sha256, blob_id, created_at)
    SELECT attempt.id, attempt.role, attempt.media_type, attempt.filename, %(size)s, %(sha256)s, blob.id, now()
    FROM attempt CROSS JOIN blob
    ON CONFLICT (attempt_id, role) DO UPDATE SET media_type = EXCLUDED.media_type, filename = EXCLUDED.filename,
        size_bytes = EXCLUDED.size_bytes, sha256 = EXCLUDED.sha256, blob_id = EXCLUDED.blob_id
    RETURNING id, attempt_id, blob_id, created_at, role
    """  # noqa: S608  the fragments are constants; every value is a parameter


_STAGE_SQL = staging_sql(
    "SELECT attempt.id, %(role)s AS role, %(media_type)s AS media_type, %(filename)s AS filename "
    + CURRENT_ACCEPTING_ATTEMPT_SQL
)


def output_stage(
    *, claim_id: uuid.UUID, role: str, media_type: str, filename: str, data: bytes, expected_sha256: str
) -> StagedOutput:
    """Keep ``data`` as the claim's output for ``role``. Uploading the same bytes again is harmless.

    One round trip when the upload is good; a refused one is explained by a second look.
    """
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected_sha256:
        raise OutputRejected("The bytes do not match the declared sha256.", details={"role": role})
    fields = {
        "role": role,
        "media_type": media_type,
        "filename": filename[:255],
        "size_bytes": len(data),
        "sha256": digest,
    }
    accepting = role_limits_accepting(role=role, media_type=media_type, size=len(data))
    with prepared_cursor() as cursor:
        cursor.execute(
            _STAGE_SQL,
            {**fields, "size": len(data), "data": data, "claim": claim_id, "accepting": json.dumps(accepting)},
        )
        row = cursor.fetchone()
    if row is None:
        refusal_explain(claim_id=claim_id, role=role, media_type=media_type, size=len(data))
    staged_id, attempt_id, blob_id, created_at, _ = row
    return StagedOutput(id=staged_id, attempt_id=attempt_id, blob_id=blob_id, created_at=created_at, **fields)


def refusal_explain(*, claim_id: uuid.UUID, role: str, media_type: str, size: int) -> NoReturn:
    """Why a statement fenced by CURRENT_ACCEPTING_ATTEMPT_SQL wrote nothing: ClaimLost unless the claim is
    current; otherwise the role's rule (undeclared role, media type, size)."""
    attempt, _ = attempt_current(claim_id)
    limit = role_limit(operation=attempt.operation, role=role, media_type=media_type)
    raise OutputRejected("The output is larger than its role allows.", details={"role": role, "limit_bytes": limit})
