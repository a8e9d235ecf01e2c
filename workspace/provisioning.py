"""Turning a validated bundle into a brand-new project (used by imports).

Two steps, so that no blob I/O happens inside the caller's transaction:
``provision_prepare`` validates every rule and stores asset bytes; then, inside
the caller's transaction, ``provision_commit`` inserts the project, its files
and the owner's grant. A crash between the two leaves only unreferenced asset
bytes; a crash inside the commit leaves nothing.
"""

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from access import facade as access
from workspace import limits
from workspace.exceptions import InvalidBundle, WorkspaceError
from workspace.history import journal
from workspace.models import Project, ProjectFile, ProjectFolder, ProjectType
from workspace.paths import path_ancestors
from workspace.services.content import PreparedContent, contents_prepare, text_contents_store
from workspace.services.projects import settings_validate
from workspace.tree import FILE, FOLDER, PathTree


@dataclass(frozen=True)
class PreparedProject:
    name: str
    project_type: str
    entry_path: str
    compiler: str
    files: tuple[PreparedContent, ...]
    folders: tuple[str, ...] = ()


def provision_prepare(
    *,
    name: str,
    project_type: str,
    entry_path: str,
    files: list[tuple[str, bytes]],
    compiler: str = "",
    folders: list[str] = (),
) -> PreparedProject:
    """Validate a candidate project (paths, counts, sizes, kinds, entry) and store its asset bytes; ``folders``
    are made too, empty or not."""
    if project_type not in ProjectType.values:
        raise InvalidBundle(f"Unknown project type {project_type!r}.")
    if len(files) > limits.max_files_per_project():
        raise InvalidBundle("The bundle has more files than a project may hold.")
    try:
        entry_path, compiler = settings_validate(project_type, entry_path, compiler)
        prepared = tuple(contents_prepare(files))
    except WorkspaceError as exc:
        raise InvalidBundle(exc.message, details=exc.details) from exc
    paths = [item.path for item in prepared]
    tree = PathTree([], [])
    try:
        for folder in folders:
            for missing in [*tree.folders_missing_for(folder), folder]:
                tree.add(missing, FOLDER)
        for path in paths:
            for folder in tree.folders_missing_for(path):
                tree.add(folder, FOLDER)
            tree.require_free(path, kind=FILE)
            tree.add(path, FILE)
    except WorkspaceError as exc:
        raise InvalidBundle(f"The bundle's paths clash: {exc.message}", details=exc.details) from exc
    if sum(item.size_bytes for item in prepared) > limits.max_project_bytes():
        raise InvalidBundle("The bundle is larger than a project may be.")
    if entry_path not in set(paths):
        raise InvalidBundle("The bundle's entry file is missing.", details={"entry_path": entry_path})
    clean_name = (name or "").strip()[:200] or "Imported project"
    made = sorted(
        {folder for path in [*paths, *(f"{folder}/x" for folder in folders)] for folder in path_ancestors(path)}
    )
    return PreparedProject(clean_name, project_type, entry_path, compiler, prepared, tuple(made))


def provision_commit(*, prepared: PreparedProject, owner_id: int) -> uuid.UUID:
    """Insert the project inside the caller's transaction and return its id."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("provision_commit must run inside the caller's transaction")
    project = Project.objects.create(
        name=prepared.name,
        type=prepared.project_type,
        entry_path=prepared.entry_path,
        compiler=prepared.compiler,
        created_by_id=owner_id,
        content_changed_at=timezone.now(),
        generation=1,
        file_count=len(prepared.files),
        total_bytes=sum(item.size_bytes for item in prepared.files),
    )
    access.grant_owner(project_id=project.pk, user_id=owner_id)
    journal.actors_note([owner_id])
    text_contents_store(list(prepared.files))
    ProjectFolder.objects.bulk_create([ProjectFolder(project=project, path=folder) for folder in prepared.folders])
    ProjectFile.objects.bulk_create(
        [
            ProjectFile(
                project=project,
                path=item.path,
                kind=item.kind,
                sha256=item.sha256,
                size_bytes=item.size_bytes,
                encoding=item.encoding,
            )
            for item in prepared.files
        ]
    )
    return project.pk
