"""Folders: made, renamed or moved with everything in them, and deleted; each one fenced change, so a capture
sees all of it or none."""

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.db.models import CharField, Count, Q, Sum, Value
from django.db.models.functions import Coalesce, Concat, Substr
from django.utils import timezone

from access import facade as access
from workspace import signals
from workspace.exceptions import FolderNotEmpty, FolderNotFound, PathConflict
from workspace.models import ProjectFile, ProjectFolder
from workspace.paths import path_normalize
from workspace.services.content import fence_enter, folders_make, project_mutated
from workspace.tree import FOLDER, PathTree


@dataclass(frozen=True)
class FolderChanged:
    path: str
    files: int  # how many files the change moved or deleted
    folders: int


def folder_create(*, actor_id: int, project_id: uuid.UUID, path: str) -> FolderChanged:
    """Make a folder (and the folders it sits in); an existing folder is not an error."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    path = path_normalize(path)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        tree = PathTree.of_project(project.pk)
        missing = tree.folders_missing_for(path)
        if tree.is_folder(path):
            return FolderChanged(path, 0, 0)
        tree.require_free(path, kind=FOLDER)
        folders_make(project, tree, [*missing, path])
        project_mutated(project, timezone.now())
        signals.tree_changed_on_commit(project_id=project_id, actor_id=actor_id)
        return FolderChanged(path, 0, len(missing) + 1)


def _existing_folder(tree: PathTree, path: str) -> None:
    if not tree.is_folder(path):
        raise FolderNotFound(details={"path": path})


def _inside(path: str) -> Q:
    return Q(path__startswith=path + "/")


def folder_move(*, actor_id: int, project_id: uuid.UUID, path: str, new_path: str) -> FolderChanged:
    """Rename or move a folder with everything in it, in one change. File ids stay, so a document open in
    an editor stays open under its new path."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    path, new_path = path_normalize(path), path_normalize(new_path)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        tree = PathTree.of_project(project.pk)
        _existing_folder(tree, path)
        if new_path == path:
            return FolderChanged(path, 0, 0)
        if new_path.startswith(path + "/"):
            raise PathConflict("A folder cannot be moved into itself.", details={"path": path, "into": new_path})
        missing = tree.folders_missing_for(new_path)
        tree.require_free(new_path, kind=FOLDER, ignoring=path)
        folders_make(project, tree, missing)
        files = ProjectFile.objects.filter(_inside(path), project=project)
        folders = ProjectFolder.objects.filter(_inside(path) | Q(path=path), project=project)
        moved_files, moved_folders = _renamed(files, path, new_path), _renamed(folders, path, new_path)
        project_mutated(project, timezone.now())
        signals.tree_changed_on_commit(project_id=project_id, actor_id=actor_id)
        return FolderChanged(new_path, moved_files, moved_folders)


def _renamed(rows, old: str, new: str) -> int:
    """Give every row under ``old`` its path under ``new``, in one statement."""
    return rows.update(path=Concat(Value(new), Substr("path", len(old) + 1), output_field=CharField()))


def folder_delete(*, actor_id: int, project_id: uuid.UUID, path: str, recursive: bool = False) -> FolderChanged:
    """Delete a folder; one that holds anything only when ``recursive`` (``FolderNotEmpty`` otherwise, with
    how many files would go)."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    path = path_normalize(path)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        tree = PathTree.of_project(project.pk)
        _existing_folder(tree, path)
        files = ProjectFile.objects.filter(_inside(path), project=project)
        folders = ProjectFolder.objects.filter(_inside(path) | Q(path=path), project=project)
        usage = files.aggregate(count=Count("pk"), size_bytes=Coalesce(Sum("size_bytes"), 0))
        file_count, size_bytes, inner_folders = usage["count"], usage["size_bytes"], folders.count() - 1
        if (file_count or inner_folders) and not recursive:
            raise FolderNotEmpty(details={"path": path, "files": file_count, "folders": inner_folders})
        files.delete()
        folders.delete()
        project_mutated(project, timezone.now(), files=-file_count, size_bytes=-size_bytes)
        signals.tree_changed_on_commit(project_id=project_id, actor_id=actor_id)
        return FolderChanged(path, file_count, inner_folders + 1)
