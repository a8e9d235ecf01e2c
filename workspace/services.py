"""Every change to a project, each in its own short transaction under the project fence.

The **fence** is a ``FOR NO KEY UPDATE`` lock on the project row, held until the
enclosing transaction ends. Every content mutation (files, settings, accepted
collaboration updates) and every snapshot freeze takes it first, so a snapshot
always sees exactly one generation. Lock order: project row, then file rows.
Bytes are hashed and stored *before* the fence is entered; nothing inside it
reads or writes blob storage.
"""

import hashlib
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from access import facade as access
from workspace import documents, limits, signals
from workspace.exceptions import (
    FileNotFound,
    FileTooLarge,
    InvalidSettings,
    InvalidText,
    PathConflict,
    PathExists,
    ProjectFull,
    TextHasNul,
    VersionMismatch,
)
from workspace.models import Compiler, FileKind, Project, ProjectFile, ProjectType, TextContent
from workspace.paths import path_ancestors, path_is_text, path_normalize
from workspace.starters import DEFAULT_ENTRY, STARTERS
from workspace.storage import asset_storage


@dataclass(frozen=True)
class PreparedContent:
    """Validated file content whose bytes are already durable (assets) or ready to insert (text)."""

    path: str
    kind: str
    sha256: str
    size_bytes: int
    text: str | None


def fence_enter(project_id: uuid.UUID) -> Project:
    """Take the project mutation fence inside the caller's transaction; re-entering is free."""
    project = Project.objects.select_for_update(no_key=True).filter(pk=project_id).first()
    if project is None:
        raise access.ProjectNotFound()
    return project


def content_prepare(*, path: str, data: bytes, kind: str | None = None) -> PreparedContent:
    """Validate ``data`` for ``path`` and store asset bytes. Call outside any transaction."""
    path = path_normalize(path)
    if kind is not None and kind not in FileKind.values:
        raise InvalidSettings(f"Unknown file kind {kind!r}.", details={"allowed": FileKind.values})
    kind = kind or (FileKind.TEXT if path_is_text(path) else FileKind.ASSET)
    if kind == FileKind.TEXT:
        if len(data) > limits.max_text_bytes():
            raise FileTooLarge(details={"limit_bytes": limits.max_text_bytes(), "size_bytes": len(data)})
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidText(details={"byte_offset": exc.start}) from exc
        if "\x00" in text:  # PostgreSQL's text cannot hold it, and no TeX or Typst source needs it
            raise TextHasNul(details={"byte_offset": data.index(b"\x00")})
        return PreparedContent(path, kind, hashlib.sha256(data).hexdigest(), len(data), text)
    if len(data) > limits.max_asset_bytes():
        raise FileTooLarge(details={"limit_bytes": limits.max_asset_bytes(), "size_bytes": len(data)})
    digest = asset_storage().put(data)
    return PreparedContent(path, FileKind.ASSET, digest, len(data), None)


def text_prepare(*, path: str, text: str) -> PreparedContent:
    return content_prepare(path=path, data=text.encode("utf-8"), kind=FileKind.TEXT)


def _mutated(project: Project, now: datetime, *, files: int = 0, size_bytes: int = 0) -> None:
    project.generation += 1
    project.content_changed_at = now
    project.file_count += files
    project.total_bytes += size_bytes
    if project.file_count > limits.max_files_per_project():
        raise ProjectFull("The project already has the most files allowed.", details={"limit": project.file_count - 1})
    if project.total_bytes > limits.max_project_bytes():
        raise ProjectFull(
            "The project would exceed its total size limit.",
            details={"limit_bytes": limits.max_project_bytes()},
        )
    project.save(update_fields=["generation", "content_changed_at", "file_count", "total_bytes"])


def _require_no_folder_clash(project: Project, path: str, *, ignoring: int | None = None) -> None:
    clash = ProjectFile.objects.filter(project=project).filter(
        Q(path__in=path_ancestors(path)) | Q(path__startswith=path + "/")
    )
    if ignoring is not None:
        clash = clash.exclude(pk=ignoring)
    if clash.exists():
        raise PathConflict(details={"path": path})


def text_content_store(prepared: PreparedContent) -> None:
    """Store the text, or refresh an existing row's ``created_at`` under a row lock held to the caller's commit:
    the collector (workspace/collector.py) keeps fresh rows and its DELETE waits for the lock."""
    if prepared.kind == FileKind.TEXT:
        TextContent.objects.bulk_create(
            [TextContent(sha256=prepared.sha256, content=prepared.text)],
            update_conflicts=True,
            unique_fields=["sha256"],
            update_fields=["created_at"],
        )


def version_require(existing: ProjectFile | None, expected_version: int | None) -> None:
    """Raise ``VersionMismatch`` unless ``expected_version`` is ``None`` or the file's current version."""
    if expected_version is None:
        return
    current = existing.version if existing is not None else None
    if current != expected_version:
        raise VersionMismatch(details={"current_version": current}, headers=_etag_headers(current))


def _etag_headers(version: int | None) -> dict[str, str]:
    return {"ETag": f'"{version}"'} if version is not None else {}


def content_commit(
    *, project_id: uuid.UUID, prepared: PreparedContent, expected_version: int | None = None
) -> tuple[ProjectFile, bool]:
    """Create or replace a file from prepared content under the fence; returns (file, created).

    A replacement with new content moves the file's version on by one; with ``expected_version``, a file
    at another version (or none) is refused with ``VersionMismatch`` and nothing changes.
    """
    with transaction.atomic():
        project = fence_enter(project_id)
        existing = ProjectFile.objects.filter(project=project, path=prepared.path).first()
        version_require(existing, expected_version)
        if existing is not None and existing.kind != prepared.kind:
            raise PathExists("A file of another kind already has that path.", details={"path": prepared.path})
        if existing is None:
            _require_no_folder_clash(project, prepared.path)
        text_content_store(prepared)
        now = timezone.now()
        if existing is None:
            _mutated(project, now, files=1, size_bytes=prepared.size_bytes)
            created = ProjectFile.objects.create(
                project=project,
                path=prepared.path,
                kind=prepared.kind,
                sha256=prepared.sha256,
                size_bytes=prepared.size_bytes,
            )
            return created, True
        _mutated(project, now, size_bytes=prepared.size_bytes - existing.size_bytes)
        if existing.sha256 != prepared.sha256:
            existing.version += 1
        existing.sha256, existing.size_bytes = prepared.sha256, prepared.size_bytes
        existing.save(update_fields=["sha256", "size_bytes", "version", "updated_at"])
        return existing, False


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
        file, created = content_commit(project_id=project_id, prepared=prepared, expected_version=expected_version)
    announcement = {
        "project_id": project_id,
        "path": file.path,
        "kind": file.kind,
        "sha256": file.sha256,
        "size_bytes": file.size_bytes,
        "actor_id": actor_id,
    }
    transaction.on_commit(lambda: signals.file_written.send(sender=None, **announcement))
    return file, created


def file_delete(*, actor_id: int, project_id: uuid.UUID, path: str) -> None:
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    path = path_normalize(path)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id)
        existing = ProjectFile.objects.filter(project=project, path=path).first()
        if existing is None:
            raise FileNotFound(details={"path": path})
        _mutated(project, timezone.now(), files=-1, size_bytes=-existing.size_bytes)
        existing.delete()


def file_move(*, actor_id: int, project_id: uuid.UUID, path: str, new_path: str) -> ProjectFile:
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    path, new_path = path_normalize(path), path_normalize(new_path)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id)
        existing = ProjectFile.objects.filter(project=project, path=path).first()
        if existing is None:
            raise FileNotFound(details={"path": path})
        if new_path == path:
            return existing
        if ProjectFile.objects.filter(project=project, path=new_path).exists():
            raise PathExists(details={"path": new_path})
        _require_no_folder_clash(project, new_path, ignoring=existing.pk)
        new_kind = FileKind.TEXT if path_is_text(new_path) else FileKind.ASSET
        if new_kind != existing.kind:
            raise InvalidSettings("Renaming would change a text document into an asset or back.")
        _mutated(project, timezone.now())
        existing.path = new_path
        existing.save(update_fields=["path", "updated_at"])
        return existing


def settings_validate(project_type: str, entry_path: str, compiler: str) -> tuple[str, str]:
    entry_path = path_normalize(entry_path)
    expected_suffix = ".tex" if project_type == ProjectType.LATEX else ".typ"
    if not entry_path.endswith(expected_suffix):
        raise InvalidSettings(f"The entry file of a {project_type} project must end in {expected_suffix}.")
    if project_type == ProjectType.TYPST:
        if compiler:
            raise InvalidSettings("Typst projects have no compiler setting.")
        return entry_path, ""
    compiler = compiler or Compiler.PDFLATEX
    if compiler not in Compiler.values:
        raise InvalidSettings(f"Unknown compiler {compiler!r}.", details={"allowed": Compiler.values})
    return entry_path, compiler


def _project_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidSettings("A project needs a name.")
    limit = Project._meta.get_field("name").max_length
    if len(name) > limit:
        raise InvalidSettings(f"A project name has at most {limit} characters.", details={"limit": limit})
    return name


def project_create(
    *,
    actor_id: int,
    name: str,
    project_type: str,
    entry_path: str | None = None,
    compiler: str | None = None,
    starter: bool = False,
) -> Project:
    """Create a project owned by ``actor_id``, optionally with starter content that compiles."""
    if project_type not in ProjectType.values:
        raise InvalidSettings(f"Unknown project type {project_type!r}.", details={"allowed": ProjectType.values})
    name = _project_name(name)
    entry_path, compiler = settings_validate(project_type, entry_path or DEFAULT_ENTRY[project_type], compiler or "")
    starter_files = (
        [text_prepare(path=path, text=text) for path, text in STARTERS[project_type].items()] if starter else []
    )
    with transaction.atomic(durable=True):
        project = Project.objects.create(
            name=name,
            type=project_type,
            entry_path=entry_path,
            compiler=compiler,
            created_by_id=actor_id,
            content_changed_at=timezone.now(),
        )
        access.grant_owner(project_id=project.pk, user_id=actor_id)
        for prepared in starter_files:
            content_commit(project_id=project.pk, prepared=prepared)
        project.refresh_from_db()
        return project


def project_update(
    *,
    actor_id: int,
    project_id: uuid.UUID,
    name: str | None = None,
    entry_path: str | None = None,
    compiler: str | None = None,
) -> Project:
    """Change a project's name or build settings; settings changes bump the generation."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id)
        new_entry, new_compiler = settings_validate(
            project.type,
            entry_path if entry_path is not None else project.entry_path,
            compiler if compiler is not None else project.compiler,
        )
        fields = []
        if name is not None:
            project.name = _project_name(name)
            fields.append("name")
        if (new_entry, new_compiler) != (project.entry_path, project.compiler):
            project.entry_path, project.compiler = new_entry, new_compiler
            fields += ["entry_path", "compiler"]
            _mutated(project, timezone.now())
        if fields:
            project.save(update_fields=fields)
        return project


def project_delete(*, actor_id: int, project_id: uuid.UUID) -> None:
    """Delete a project, its files and grants. Content bytes stay (content is shared by digest)."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.DELETE)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id)
        access.grants_delete_for_project(project_id=project.pk)
        project.delete()
