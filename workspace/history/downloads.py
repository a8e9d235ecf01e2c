"""A version of a project as a zip: the files it left, text as it was, assets byte for byte."""

import uuid
from collections.abc import Iterator

from access import facade as access
from workspace.archives import ArchiveEntry, archive_chunks
from workspace.history.reading import content_of, history_brought_up_to_date, state_at, version_get
from workspace.models import Project
from workspace.paths import path_ancestors
from workspace.services.archives import ArchiveOut


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
