"""Content and the fence: validating bytes for a path, and writing one file's content under the fence.

The **fence** is a ``FOR NO KEY UPDATE`` lock on the project row, held until the enclosing transaction ends.
Every content mutation (files, folders, settings, accepted collaboration updates) and every snapshot freeze
takes it first, so a snapshot always sees exactly one generation. Lock order: project row, then file rows.
Bytes are hashed and stored *before* the fence is entered; nothing inside it reads or writes blob storage.
"""

import hashlib
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from datetime import datetime

import psycopg
from django.db import connection, transaction
from django.utils import timezone

from access import facade as access
from workspace import encodings, limits
from workspace.exceptions import (
    FileTooLarge,
    InvalidSettings,
    InvalidText,
    PathExists,
    ProjectFull,
    TextHasNul,
    VersionMismatch,
)
from workspace.history import journal
from workspace.models import FileKind, Project, ProjectFile, ProjectFolder, TextContent
from workspace.paths import path_is_text, path_normalize
from workspace.storage import asset_storage
from workspace.tree import FILE, FOLDER, PathTree


@dataclass(frozen=True)
class PreparedContent:
    """Validated file content whose bytes are already durable (assets) or ready to insert (text).

    ``encoding`` names the encoding of a text file that is not UTF-8, kept byte for byte as an asset."""

    path: str
    kind: str
    sha256: str
    size_bytes: int
    text: str | None
    encoding: str = ""
    stored: bool = False  # a text stored already, before the transaction (``contents_prepare``)


def fence_enter(project_id: uuid.UUID, *, actors: Iterable[int | None] | None = None) -> Project:
    """Take the project mutation fence inside the caller's transaction; re-entering is free. ``actors``: the
    users whose change this transaction writes, for the project's history (workspace/history/journal.py)."""
    project = Project.objects.select_for_update(no_key=True).filter(pk=project_id).first()
    if project is None:
        raise access.ProjectNotFound()
    if actors is not None:
        journal.actors_note(actors)
    return project


def content_prepare(*, path: str, data: bytes, kind: str | None = None) -> PreparedContent:
    """Validate ``data`` for ``path`` and store asset bytes. Call outside any transaction.

    A text file (by its extension) that is not UTF-8 is kept byte for byte as an asset with its detected
    encoding, unless the caller asked for ``kind="text"``, which must be UTF-8 (``InvalidText``)."""
    path = path_normalize(path)
    if kind is not None and kind not in FileKind.values:
        raise InvalidSettings(f"Unknown file kind {kind!r}.", details={"allowed": FileKind.values})
    asked_for_text = kind == FileKind.TEXT
    kind = kind or (FileKind.TEXT if path_is_text(path) else FileKind.ASSET)
    if kind == FileKind.TEXT:
        if len(data) > limits.max_text_bytes():
            raise FileTooLarge(details={"limit_bytes": limits.max_text_bytes(), "size_bytes": len(data)})
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            if asked_for_text:
                raise InvalidText(details={"byte_offset": exc.start}) from exc
            return _asset_prepared(path, data, encoding=encodings.legacy_encoding_of(data) or "")
        if "\x00" in text:  # PostgreSQL's text cannot hold it, and no TeX or Typst source needs it
            raise TextHasNul(details={"byte_offset": data.index(b"\x00")})
        return PreparedContent(path, kind, hashlib.sha256(data).hexdigest(), len(data), text)
    return _asset_prepared(path, data)


def _asset_prepared(path: str, data: bytes, *, encoding: str = "") -> PreparedContent:
    if len(data) > limits.max_asset_bytes():
        raise FileTooLarge(details={"limit_bytes": limits.max_asset_bytes(), "size_bytes": len(data)})
    digest = asset_storage().put(data)
    return PreparedContent(path, FileKind.ASSET, digest, len(data), None, encoding)


def text_prepare(*, path: str, text: str) -> PreparedContent:
    return content_prepare(path=path, data=text.encode("utf-8"), kind=FileKind.TEXT)


def project_mutated(project: Project, now: datetime, *, files: int = 0, size_bytes: int = 0) -> None:
    """Count one content change of the fenced ``project`` (its generation) and its new usage, within limits."""
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


def folders_make(project: Project, tree: PathTree, paths: list[str]) -> None:
    """Create these folders (known to be missing) under the caller's fence, and note them in ``tree``."""
    for path in paths:
        tree.add(path, FOLDER)
    _folder_rows_insert(project, paths)


def _folder_rows_insert(project: Project, paths: list[str]) -> None:
    if paths:
        ProjectFolder.objects.bulk_create([ProjectFolder(project=project, path=path) for path in paths])


def text_content_store(prepared: PreparedContent) -> None:
    """Store the text, or refresh an existing row's ``created_at`` under a row lock held to the caller's commit:
    the collector (workspace/collector.py) keeps fresh rows and its DELETE waits for the lock."""
    text_contents_store([prepared])


def text_contents_store(prepared: list[PreparedContent]) -> None:
    """``text_content_store`` for many texts (those not ``stored`` already), pipelined with their parameters bound
    by PostgreSQL: megabytes of text quoted by the client cost more than inserting them."""
    texts = {item.sha256: item.text for item in prepared if item.kind == FileKind.TEXT and not item.stored}
    if not texts:
        return
    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.executemany(TEXT_STORE_SQL, list(texts.items()))


TEXT_STORE_SQL = f"""
    INSERT INTO {TextContent._meta.db_table} (sha256, content, created_at) VALUES (%s, %s, now())
    ON CONFLICT (sha256) DO UPDATE SET created_at = EXCLUDED.created_at
"""  # noqa: S608  our table; the values are parameters


def contents_prepare(files: list[tuple[str, bytes]]) -> list[PreparedContent]:
    """``content_prepare`` for many files, their texts stored too before any transaction, as asset bytes are:
    text rows are as immutable and content-addressed, and the collector keeps fresh ones. A thread of its own
    (with its own connection) stores each few megabytes of text while the next files are checked and the
    assets written, so PostgreSQL's work and ours overlap. Inside a caller's transaction the texts are left to
    the commit (``text_contents_store``), as for one file."""
    if connection.in_atomic_block:
        return [content_prepare(path=path, data=data) for path, data in files]
    prepared: list[PreparedContent] = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="texts-store") as storer:
        stored, pending, pending_bytes = [], [], 0
        try:
            for path, data in files:
                item = content_prepare(path=path, data=data)
                if item.kind == FileKind.TEXT:
                    pending.append(item)
                    pending_bytes += item.size_bytes
                    item = replace(item, stored=True)
                prepared.append(item)
                if pending_bytes >= TEXT_BATCH_BYTES:
                    stored.append(storer.submit(text_contents_store, pending))
                    pending, pending_bytes = [], 0
            stored.append(storer.submit(text_contents_store, pending))
        finally:  # a file refused midway: what was submitted still runs, and the thread's connection closes
            stored.append(storer.submit(_connection_close))
        for future in stored:
            future.result()
    return prepared


TEXT_BATCH_BYTES = 4 * 1024 * 1024


def _connection_close() -> None:
    """Close the calling thread's own connection (the name is looked up there, not where this is submitted)."""
    connection.close()


def version_require(existing: ProjectFile | None, expected_version: int | None) -> None:
    """Raise ``VersionMismatch`` unless ``expected_version`` is ``None`` or the file's current version."""
    if expected_version is None:
        return
    current = existing.version if existing is not None else None
    if current != expected_version:
        raise VersionMismatch(details={"current_version": current}, headers=_etag_headers(current))


def _etag_headers(version: int | None) -> dict[str, str]:
    return {"ETag": f'"{version}"'} if version is not None else {}


def file_created(project: Project, tree: PathTree, prepared: PreparedContent) -> ProjectFile:
    """Under the caller's fence: a new file at a path the tree allows, with any folders it needs."""
    return files_created(project, tree, [prepared])[0]


def files_created(project: Project, tree: PathTree, prepared: list[PreparedContent]) -> list[ProjectFile]:
    """Under the caller's fence: new files at paths the tree allows (checked one after another, so the batch
    against itself too), with the folders they need; a few statements for any number of files."""
    folders: list[str] = []
    for item in prepared:
        missing = tree.folders_missing_for(item.path)
        tree.require_free(item.path, kind=FILE)
        for folder in missing:
            tree.add(folder, FOLDER)
        folders += missing
        tree.add(item.path, FILE)
    _folder_rows_insert(project, folders)
    text_contents_store(prepared)
    return ProjectFile.objects.bulk_create(
        [
            ProjectFile(
                project=project,
                path=item.path,
                kind=item.kind,
                sha256=item.sha256,
                size_bytes=item.size_bytes,
                encoding=item.encoding,
            )
            for item in prepared
        ],
        batch_size=1000,
    )


def file_replaced(existing: ProjectFile, prepared: PreparedContent) -> ProjectFile:
    """Under the caller's fence: new content for an existing file (its version moves on when it changed)."""
    text_content_store(prepared)
    if existing.sha256 != prepared.sha256:
        existing.version += 1
    existing.sha256, existing.size_bytes, existing.encoding = prepared.sha256, prepared.size_bytes, prepared.encoding
    existing.save(update_fields=["sha256", "size_bytes", "version", "encoding", "updated_at"])
    return existing


def content_commit(
    *,
    project_id: uuid.UUID,
    prepared: PreparedContent,
    expected_version: int | None = None,
    actors: Iterable[int | None] | None = None,
) -> tuple[ProjectFile, bool]:
    """Create or replace a file from prepared content under the fence; returns (file, created).

    A replacement with new content moves the file's version on by one; with ``expected_version``, a file
    at another version (or none) is refused with ``VersionMismatch`` and nothing changes.
    """
    with transaction.atomic():
        project = fence_enter(project_id, actors=actors)
        existing = ProjectFile.objects.filter(project=project, path=prepared.path).first()
        version_require(existing, expected_version)
        if existing is not None and existing.kind != prepared.kind:
            raise PathExists("A file of another kind already has that path.", details={"path": prepared.path})
        now = timezone.now()
        if existing is None:
            tree = PathTree.of_project(project.pk)
            created = file_created(project, tree, prepared)
            project_mutated(project, now, files=1, size_bytes=prepared.size_bytes)
            return created, True
        project_mutated(project, now, size_bytes=prepared.size_bytes - existing.size_bytes)
        return file_replaced(existing, prepared), False
