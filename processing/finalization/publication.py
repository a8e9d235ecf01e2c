"""What a finalizer returns, and how it refuses.

A finalizer runs without locks: it validates the staged outputs, rechecks that
the requester may still see the result, and returns a ``Publication``: what to
publish, any work (``before_publish``) that must run in the publishing
transaction, and a ``PublicationCondition`` the publishing statement checks
itself. These types sit below every finalizer, so finalizers in any room (the
Library's indexing, imports' provisioning) import them without a cycle.
"""

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from processing.models import ProcessingArtifact, StagedOutput


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
