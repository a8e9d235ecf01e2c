"""Restoring files, or the whole project, to a version: a new change by the person restoring, never a rewrite.

The version in progress ends just before the restore (``version_close``), and everything the restore writes
is journalled as restoring that version, so it folds into a version of its own. Texts are restored through the
document keeper, so authors with the document open receive the old text as an edit; a file deleted since comes
back as a new file at the path it had. Restoring the version before a restore undoes it.
"""

import uuid

from django.db import transaction
from django.utils import timezone

from access import facade as access
from workspace import documents, signals
from workspace.exceptions import RestoreConflict
from workspace.history import journal
from workspace.history.folding import history_fold, text_of, version_close
from workspace.history.models import Version, VersionKind
from workspace.history.reading import FileState, history_brought_up_to_date, state_at, version_get
from workspace.models import FileKind, ProjectFile
from workspace.paths import path_normalize
from workspace.services.content import (
    PreparedContent,
    fence_enter,
    file_replaced,
    files_created,
    folders_make,
    project_mutated,
)
from workspace.storage import asset_storage
from workspace.tree import FILE, PathTree


def history_restore(
    *, actor_id: int, project_id: uuid.UUID, number: int, paths: list[str] | None = None
) -> Version | None:
    """Make the selected files (``paths`` as they were at the version or are now; ``None``: every file) what
    version ``number`` left them. Returns the restore's version, ``None`` when nothing differed."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    wanted = None if paths is None else {path_normalize(path) for path in paths}
    history_brought_up_to_date(project_id=project_id)  # the fold's work done before the fence
    version_get(project_id=project_id, number=number)
    asset_sizes = _assets_kept(state_at(project_id=project_id, number=number))
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        documents.projections_pending(project_id=project_id)
        version_close(project_id=project_id)
        version_get(project_id=project_id, number=number)  # still there: retention may have folded it meanwhile
        target = state_at(project_id=project_id, number=number)
        current = {file.pk: file for file in ProjectFile.objects.filter(project=project)}
        selected = {
            file_id
            for file_id in target.keys() | current.keys()
            if wanted is None or {_path(target.get(file_id)), _path(current.get(file_id))} & wanted
        }
        journal.actors_note([actor_id])  # the projections above named their own typists
        journal.restore_note(number)
        _Restore(actor_id, project, target, current, selected, asset_sizes).run()
        journal.restore_note(None)
        restored = history_fold(project_id=project_id)
        if restored is None or restored.kind != VersionKind.RESTORE or restored.restored_from != number:
            return None
        restored.closed = True
        restored.save(update_fields=["closed"])
        signals.tree_changed_on_commit(project_id=project_id, actor_id=actor_id)
        return restored


def _assets_kept(state: dict[int, FileState]) -> dict[str, int]:
    """Before the fence: the sizes of the version's assets, their bytes marked fresh for the collector (as a
    writer's ``put`` does) so that they are still there when the restore commits."""
    storage, sizes = asset_storage(), {}
    for item in state.values():
        if item.file_kind == FileKind.ASSET and item.sha256 not in sizes:
            storage.touch(item.sha256)
            sizes[item.sha256] = storage.path_of(item.sha256).stat().st_size
    return sizes


def _path(item) -> str | None:
    return None if item is None else item.path


class _Restore:
    def __init__(self, actor_id, project, target, current, selected, asset_sizes: dict[str, int]):
        self.actor_id, self.project, self.asset_sizes = actor_id, project, asset_sizes
        self.target, self.current, self.selected = target, current, selected
        self.tree = PathTree.of_project(project.pk)
        self.files_delta = self.bytes_delta = 0

    def run(self) -> None:
        for file_id in sorted(self.selected):
            file = self.current.get(file_id)
            if file is not None and file_id not in self.target:
                self._delete(file)
        kept = [
            (self.current[file_id], self.target[file_id])
            for file_id in sorted(self.selected)
            if file_id in self.current and file_id in self.target
        ]
        self._moves([(file, state.path) for file, state in kept if file.path != state.path])
        texts: list[tuple[int, str]] = []
        for file, state in kept:
            if file.sha256 != state.sha256:
                if file.kind == FileKind.TEXT and documents.keeper() is not None:
                    texts.append((file.pk, text_of(state.sha256)))
                else:
                    self.bytes_delta -= file.size_bytes
                    file_replaced(file, self._prepared(state))
                    self.bytes_delta += file.size_bytes
        recreated = [
            self._prepared(self.target[file_id])
            for file_id in sorted(self.selected)
            if file_id in self.target and file_id not in self.current
        ]
        for item in recreated:
            self._require_free(item.path)
        files_created(self.project, self.tree, recreated)
        self.files_delta += len(recreated)
        self.bytes_delta += sum(item.size_bytes for item in recreated)
        project_mutated(self.project, timezone.now(), files=self.files_delta, size_bytes=self.bytes_delta)
        if texts:
            documents.keeper().texts_replace(actor_id=self.actor_id, project_id=self.project.pk, texts=texts)

    def _delete(self, file: ProjectFile) -> None:
        file.delete()
        self.tree.remove(file.path)
        self.files_delta -= 1
        self.bytes_delta -= file.size_bytes

    def _moves(self, moves: list[tuple[ProjectFile, str]]) -> None:
        """Move the files to their paths as a whole, so that files swapping names or a chain of renames are
        no conflict: each first to a name of its own beside it (within this transaction, and within the one
        version the history records), then each to where it goes."""
        for file, _ in moves:
            self.tree.remove(file.path)
            file.path = f"{file.path}.restoring-{file.pk}"
            file.save(update_fields=["path", "updated_at"])
        for file, new_path in moves:
            self._require_free(new_path)
            folders_make(self.project, self.tree, self.tree.folders_missing_for(new_path))
            self.tree.add(new_path, FILE)
            file.path = new_path
            file.save(update_fields=["path", "updated_at"])

    def _require_free(self, path: str) -> None:
        if self.tree.kind_of(path) is not None:
            raise RestoreConflict(details={"path": path})

    def _prepared(self, state: FileState) -> PreparedContent:
        if state.file_kind == FileKind.TEXT:
            text = text_of(state.sha256)
            return PreparedContent(state.path, FileKind.TEXT, state.sha256, len(text.encode("utf-8")), text)
        size = self.asset_sizes[state.sha256]
        return PreparedContent(state.path, FileKind.ASSET, state.sha256, size, None)
