"""Writing, renaming, moving, converting and deleting single files, each one fenced change."""

import uuid

from django.db import transaction
from django.utils import timezone

from access import facade as access
from workspace import documents, encodings, signals
from workspace.exceptions import FileNotFound, InvalidSettings, NotATextDocument
from workspace.models import FileKind, ProjectFile
from workspace.paths import path_is_text, path_normalize
from workspace.selectors import file_bytes
from workspace.services.content import (
    content_commit,
    content_prepare,
    fence_enter,
    file_created,
    folders_make,
    project_mutated,
    text_prepare,
)
from workspace.tree import FILE, PathTree


def file_write(
    *,
    actor_id: int,
    project_id: uuid.UUID,
    path: str,
    data: bytes,
    kind: str | None = None,
    expected_version: int | None = None,
) -> tuple[ProjectFile, bool]:
    """Create or replace the file at ``path``. Raises workspace errors for every rule it breaks.

    Replacing a text document goes through the document keeper (see ``workspace.documents``), so that
    the new text is an edit that authors typing in it receive rather than a write beneath them.
    """
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    prepared = content_prepare(path=path, data=data, kind=kind)
    keeper = documents.keeper()
    existing = ProjectFile.objects.filter(project_id=project_id, path=prepared.path).first()
    replaces_text = existing is not None and existing.kind == FileKind.TEXT == prepared.kind
    if keeper is not None and replaces_text:
        keeper.text_replace(
            actor_id=actor_id,
            project_id=project_id,
            path=prepared.path,
            text=prepared.text,
            expected_version=expected_version,
        )
        file, created = ProjectFile.objects.filter(pk=existing.pk).first(), False
        if file is None:
            raise FileNotFound(details={"path": prepared.path})
    else:
        file, created = content_commit(
            project_id=project_id, prepared=prepared, expected_version=expected_version, actors=[actor_id]
        )
    files_written_announce(project_id=project_id, actor_id=actor_id, files=[file], tree_changed=created)
    return file, created


def files_written_announce(*, project_id: uuid.UUID, actor_id: int, files: list, tree_changed: bool) -> None:
    """Within the writing transaction: once it commits, say which files were written (and that the tree
    changed, when it did)."""
    announcements = [
        {
            "project_id": project_id,
            "path": file.path,
            "kind": file.kind,
            "sha256": file.sha256,
            "size_bytes": file.size_bytes,
            "actor_id": actor_id,
        }
        for file in files
    ]

    def announce() -> None:
        for announcement in announcements:
            signals.file_written.send(sender=None, **announcement)
        if tree_changed:
            signals.tree_changed_send(project_id=project_id, actor_id=actor_id)

    transaction.on_commit(announce)


def file_delete(*, actor_id: int, project_id: uuid.UUID, path: str) -> None:
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    path = path_normalize(path)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        existing = ProjectFile.objects.filter(project=project, path=path).first()
        if existing is None:
            raise FileNotFound(details={"path": path})
        project_mutated(project, timezone.now(), files=-1, size_bytes=-existing.size_bytes)
        existing.delete()
        signals.tree_changed_on_commit(project_id=project_id, actor_id=actor_id)


def file_move(*, actor_id: int, project_id: uuid.UUID, path: str, new_path: str) -> ProjectFile:
    """Rename or move a file (its id, and so its live editors, stay); folders it needs are made."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    path, new_path = path_normalize(path), path_normalize(new_path)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        existing = ProjectFile.objects.filter(project=project, path=path).first()
        if existing is None:
            raise FileNotFound(details={"path": path})
        if new_path == path:
            return existing
        tree = PathTree.of_project(project.pk)
        missing = tree.folders_missing_for(new_path)
        tree.require_free(new_path, kind=FILE, ignoring=path)
        legacy_text = existing.encoding != ""  # a legacy-encoded text file keeps its bytes under any name
        new_kind = FileKind.TEXT if path_is_text(new_path) else FileKind.ASSET
        if new_kind != existing.kind and not legacy_text:
            raise InvalidSettings("Renaming would change a text document into an asset or back.")
        folders_make(project, tree, missing)
        project_mutated(project, timezone.now())
        existing.path = new_path
        existing.save(update_fields=["path", "updated_at"])
        signals.tree_changed_on_commit(project_id=project_id, actor_id=actor_id)
        return existing


def file_convert_to_utf8(*, actor_id: int, project_id: uuid.UUID, path: str) -> ProjectFile:
    """Make a legacy-encoded text file a UTF-8 text document (a new document, editable live), rewriting a
    declaration of its old encoding (``\\usepackage[latin1]{inputenc}`` → ``[utf8]``). Raises
    ``NotATextDocument`` for a file that is not one."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    path = path_normalize(path)
    legacy = ProjectFile.objects.filter(project_id=project_id, path=path).first()
    if legacy is None:
        raise FileNotFound(details={"path": path})
    if not legacy.encoding:
        raise NotATextDocument("Only a text file in another encoding can be converted to UTF-8.")
    prepared = text_prepare(path=path, text=encodings.utf8_converted(file_bytes(legacy), legacy.encoding))
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        current = ProjectFile.objects.filter(project=project, path=path).first()
        if current is None or current.sha256 != legacy.sha256 or current.encoding != legacy.encoding:
            raise InvalidSettings("The file changed while it was being converted; try again.")
        now = timezone.now()
        current.delete()  # a text document is a new file (its id names its live document)
        tree = PathTree.of_project(project.pk)
        converted = file_created(project, tree, prepared)
        project_mutated(project, now, size_bytes=prepared.size_bytes - legacy.size_bytes)
        files_written_announce(project_id=project_id, actor_id=actor_id, files=[converted], tree_changed=True)
        return converted
