"""A version of a project as a zip (the files it left, text as it was, assets byte for byte), and as a snapshot
a build captures."""

import uuid
from collections.abc import Iterator

from django.db.models import F, Func, IntegerField
from django.utils import timezone

from access import facade as access
from workspace.archives import ArchiveEntry, archive_chunks
from workspace.history.reading import content_of, history_brought_up_to_date, state_at, version_get
from workspace.models import FileKind, Project, SnapshotPin, TextContent
from workspace.paths import path_ancestors
from workspace.services.archives import ArchiveOut
from workspace.snapshots import DEFAULT_PIN_TTL, FrozenFile, FrozenSnapshot
from workspace.storage import asset_storage


def version_archive(*, user_id: int, project_id: uuid.UUID, number: int) -> ArchiveOut:
    """Named after the project and the version's label (or number). History keeps files, not empty folders:
    the zip holds the folders its files sit in."""
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    history_brought_up_to_date(project_id=project_id)
    version = version_get(project_id=project_id, number=number)
    files = sorted(state_at(project_id=project_id, number=number).values(), key=lambda state: state.path)
    folders = sorted({folder for state in files for folder in path_ancestors(state.path)})
    label = version.labels.order_by("created_at").values_list("name", flat=True).first()
    name = Project.objects.values_list("name", flat=True).get(pk=project_id)
    entries: Iterator[ArchiveEntry] = (
        ArchiveEntry(state.path, version.ended_at, [content_of(state)]) for state in files
    )
    return ArchiveOut(f"{name} - {label or f'version {number}'}", archive_chunks(folders, entries))


def version_snapshot_freeze(*, project_id: uuid.UUID, number: int) -> FrozenSnapshot:
    """The version's files as a snapshot a capture reads (its digests pinned like any snapshot's), for a build
    of that version. Its generation is 0: a version is no generation of the project, and the same version
    captured twice is the same input, so its builds are reused."""
    history_brought_up_to_date(project_id=project_id)
    version = version_get(project_id=project_id, number=number)
    files = sorted(state_at(project_id=project_id, number=number).values(), key=lambda state: state.path)
    sizes = dict(
        TextContent.objects.filter(sha256__in=[file.sha256 for file in files if file.file_kind == FileKind.TEXT])
        .annotate(size=Func(F("content"), function="octet_length", output_field=IntegerField()))
        .values_list("sha256", "size")
    )
    storage = asset_storage()
    frozen = tuple(
        FrozenFile(
            file.path,
            file.file_kind,
            sizes.get(file.sha256, 0)
            if file.file_kind == FileKind.TEXT
            else storage.path_of(file.sha256).stat().st_size,
            file.sha256,
            1,
        )
        for file in files
    )
    project = Project.objects.get(pk=project_id)
    pin = SnapshotPin.objects.create(
        project_id=project_id,
        generation=0,
        digests=sorted({file.sha256 for file in frozen}),
        expires_at=timezone.now() + DEFAULT_PIN_TTL,
    )
    return FrozenSnapshot(
        project_id=project_id,
        project_type=project.type,
        entry_path=project.entry_path,
        compiler=project.compiler,
        generation=0,
        content_changed_at=version.ended_at,
        pin_id=pin.pk,
        files=frozen,
    )
