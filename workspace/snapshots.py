"""Frozen snapshots for capture: what a job will build, pinned so its bytes outlive later edits.

``snapshot_freeze`` runs inside the caller's transaction and under the fence:
it reads only metadata (paths, kinds, sizes, digests) and writes one pin row.
``snapshot_freeze_every_edit`` is the whole freeze of a capture: its own short transaction under the fence,
in which the documents' keeper (``workspace.documents``) first writes every accepted edit into the rows.
``snapshot_contents`` runs after the caller has committed and left the fence.
"""

import hashlib
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from workspace import documents
from workspace.exceptions import WorkspaceError
from workspace.models import FileKind, ProjectFile, SnapshotPin, TextContent
from workspace.services.content import fence_enter
from workspace.storage import asset_storage

DEFAULT_PIN_TTL = timedelta(hours=2)
TEXT_BATCH = 200


class PinnedContentMissing(WorkspaceError):
    """Pinned content is missing or does not match its digest."""

    code = "pinned_content_missing"
    status_code = 500


@dataclass(frozen=True)
class FrozenFile:
    path: str
    kind: str
    size_bytes: int
    sha256: str
    version: int


@dataclass(frozen=True)
class FrozenSnapshot:
    project_id: uuid.UUID
    project_type: str
    entry_path: str
    compiler: str
    generation: int
    content_changed_at: datetime
    pin_id: uuid.UUID
    files: tuple[FrozenFile, ...]


def snapshot_freeze(*, project_id: uuid.UUID, pin_ttl: timedelta = DEFAULT_PIN_TTL) -> FrozenSnapshot:
    """Freeze the project as of now. Must run inside the caller's transaction (it takes the fence)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("snapshot_freeze must run inside the capture transaction")
    project = fence_enter(project_id)
    rows = (
        ProjectFile.objects.filter(project=project)
        .order_by("path")
        .values_list("path", "kind", "size_bytes", "sha256", "version")
    )
    files = tuple(FrozenFile(*row) for row in rows)
    now = timezone.now()
    pin = SnapshotPin.objects.create(
        project_id=project.pk,
        generation=project.generation,
        digests=sorted({file.sha256 for file in files}),
        expires_at=now + pin_ttl,
    )
    return FrozenSnapshot(
        project_id=project.pk,
        project_type=project.type,
        entry_path=project.entry_path,
        compiler=project.compiler,
        generation=project.generation,
        content_changed_at=project.content_changed_at,
        pin_id=pin.pk,
        files=files,
    )


def snapshot_freeze_every_edit(*, project_id: uuid.UUID) -> FrozenSnapshot:
    """Freeze the project with each text document as every edit its keeper accepted left it: one transaction
    holding the fence, so no edit is accepted between the projection and the freeze. Raises ``ProjectNotFound``."""
    with transaction.atomic():
        fence_enter(project_id)
        documents.projections_pending(project_id=project_id)
        return snapshot_freeze(project_id=project_id)


def snapshot_contents(snapshot: FrozenSnapshot) -> Iterator[tuple[FrozenFile, bytes]]:
    """Yield each frozen file with its bytes, verified against its digest. Call outside the fence."""
    if not SnapshotPin.objects.filter(pk=snapshot.pin_id).exists():
        raise PinnedContentMissing("The snapshot's pin was released before its content was read.")
    texts = [file for file in snapshot.files if file.kind == FileKind.TEXT]
    for start in range(0, len(texts), TEXT_BATCH):
        batch = texts[start : start + TEXT_BATCH]
        contents = dict(
            TextContent.objects.filter(sha256__in={file.sha256 for file in batch}).values_list("sha256", "content")
        )
        for file in batch:
            if file.sha256 not in contents:
                raise PinnedContentMissing(details={"path": file.path})
            yield file, contents[file.sha256].encode("utf-8")
    storage = asset_storage()
    for file in snapshot.files:
        if file.kind != FileKind.ASSET:
            continue
        try:
            data = storage.read(file.sha256)
        except FileNotFoundError as exc:
            raise PinnedContentMissing(details={"path": file.path}) from exc
        if hashlib.sha256(data).hexdigest() != file.sha256:
            raise PinnedContentMissing("Stored asset bytes do not match their digest.", details={"path": file.path})
        yield file, data


def pin_release(*, pin_id: uuid.UUID) -> None:
    """Release a snapshot pin. Idempotent: releasing twice, or an expired pin, is fine.

    One statement: nothing refers to a pin, so the ORM's delete (a transaction around the same
    DELETE) would only add two round trips to every capture.
    """
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {SnapshotPin._meta.db_table} WHERE id = %s", [pin_id])  # noqa: S608  our table
