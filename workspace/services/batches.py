"""Many files and folders written as one fenced change (a zip unpacked, several files dropped at once):
collaborators, and any capture, see all of it or none of it.

Bytes are checked and stored first, outside any transaction; then, under the fence, the batch is checked as a
whole against the tree (clashes, and files it would overwrite) before anything is written. A text document
that is overwritten becomes an edit of its live document (the document keeper), so authors typing in it keep
what they typed and see the new text arrive.
"""

import uuid
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from access import facade as access
from workspace import documents
from workspace.exceptions import ArchiveConflicts
from workspace.models import FileKind, ProjectFile
from workspace.paths import path_normalize
from workspace.services.content import (
    PreparedContent,
    contents_prepare,
    fence_enter,
    file_replaced,
    files_created,
    folders_make,
    project_mutated,
)
from workspace.services.files import files_written_announce
from workspace.tree import FOLDER, PathTree


@dataclass
class BatchWritten:
    created: list[ProjectFile] = field(default_factory=list)
    replaced: list[ProjectFile] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)  # folders made

    @property
    def files(self) -> list[ProjectFile]:
        return sorted([*self.created, *self.replaced], key=lambda file: file.path)


def files_write_batch(
    *,
    actor_id: int,
    project_id: uuid.UUID,
    files: list[tuple[str, bytes]],
    folders: list[str] = (),
    overwrite: bool = False,
) -> BatchWritten:
    """Write ``files`` (path, bytes) and make ``folders``, in one fenced change. Existing files are refused
    with ``ArchiveConflicts`` (listing them) unless ``overwrite``."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    prepared = contents_prepare(files)
    folders = [path_normalize(folder) for folder in folders]
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        tree = PathTree.of_project(project.pk)
        existing = {
            file.path: file
            for file in ProjectFile.objects.filter(project=project, path__in=[item.path for item in prepared])
        }
        if existing and not overwrite:
            raise ArchiveConflicts(details={"paths": sorted(existing)})
        written, now = BatchWritten(), timezone.now()
        for folder in folders:
            _folder_made(project, tree, folder, written)
        keeper = documents.keeper()
        replacements: list[tuple[ProjectFile, PreparedContent]] = []
        files_delta, bytes_delta = 0, 0
        new: list[PreparedContent] = []
        for item in prepared:
            current = existing.get(item.path)
            if current is not None and current.kind == item.kind == FileKind.TEXT and keeper is not None:
                replacements.append((current, item))  # sizes counted by the document's own projection
                continue
            if current is not None and current.kind == item.kind:
                bytes_delta += item.size_bytes - current.size_bytes
                written.replaced.append(file_replaced(current, item))
                continue
            if current is not None:  # text becomes asset or back: the old file goes, a new one takes its path
                current.delete()
                tree.remove(current.path)
                files_delta, bytes_delta = files_delta - 1, bytes_delta - current.size_bytes
            new.append(item)
            files_delta, bytes_delta = files_delta + 1, bytes_delta + item.size_bytes
        folders_before = set(tree.folders())
        written.created += files_created(project, tree, new)
        written.folders += sorted(set(tree.folders()) - folders_before)
        project_mutated(project, now, files=files_delta, size_bytes=bytes_delta)
        if replacements:
            texts = [(current.pk, item.text) for current, item in replacements]
            keeper.texts_replace(actor_id=actor_id, project_id=project_id, texts=texts)
            written.replaced += ProjectFile.objects.filter(pk__in=[current.pk for current, _ in replacements])
        files_written_announce(
            project_id=project_id, actor_id=actor_id, files=written.files, tree_changed=bool(written.created or folders)
        )
    return written


def _folder_made(project, tree: PathTree, folder: str, written: BatchWritten) -> None:
    missing = tree.folders_missing_for(folder)
    if not tree.is_folder(folder):
        tree.require_free(folder, kind=FOLDER)
        missing.append(folder)
    folders_make(project, tree, missing)
    written.folders += missing
