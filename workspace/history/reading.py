"""Reading history: versions newest first, the project's files as a version left them, and diffs.

A project's state at version *n* is, for each file id, its state after the newest version up to *n* that
touched it; the ``file_states_by_version`` index makes that one ordered range per project.
"""

import difflib
import uuid
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Exists, OuterRef, Prefetch, Q

from workspace import documents
from workspace.exceptions import FileNotFound, VersionNotFound
from workspace.history.folding import history_fold, lines_counted, text_of
from workspace.history.models import Version, VersionChange, VersionKind
from workspace.models import FileKind, ProjectFile
from workspace.paths import path_normalize
from workspace.services.content import fence_enter
from workspace.storage import asset_storage

PAGE = 50
BLAME_VERSIONS = 24  # a diff each; lines changed before the last 24 versions are their authors' together


@dataclass(frozen=True)
class FileState:
    file_id: int
    path: str
    file_kind: str
    sha256: str


@dataclass(frozen=True)
class FileDiff:
    """One file's difference between two states of the project (``old`` is the earlier)."""

    path: str
    old_path: str
    kind: str  # edit | create | delete | move
    file_kind: str
    old: FileState | None
    new: FileState | None

    def lines_changed(self) -> tuple[int, int]:
        """Lines added and removed (0, 0 for an asset)."""
        if self.file_kind != FileKind.TEXT:
            return 0, 0
        before = text_of(self.old.sha256) if self.old else ""
        after = text_of(self.new.sha256) if self.new else ""
        return lines_counted(before, after)


def history_brought_up_to_date(*, project_id: uuid.UUID) -> Version | None:
    """Project every live document's accepted edits (a short fenced change when any are pending), then fold
    the journal; returns the newest version."""
    with transaction.atomic():
        fence_enter(project_id)
        documents.projections_pending(project_id=project_id)
    return history_fold(project_id=project_id)


def versions_page(
    *, project_id: uuid.UUID, path: str | None = None, author_id: int | None = None, before: int | None = None
) -> tuple[list[Version], int | None]:
    """Up to ``PAGE`` versions, newest first, with their changes; and the ``before`` of the next page."""
    history_brought_up_to_date(project_id=project_id)
    versions = Version.objects.filter(project_id=project_id).order_by("-number")
    if before is not None:
        versions = versions.filter(number__lt=before)
    if path:
        path = path_normalize(path)
        touching = VersionChange.objects.filter(version=OuterRef("pk")).filter(Q(path=path) | Q(old_path=path))
        versions = versions.filter(Exists(touching))
    if author_id is not None:
        versions = versions.filter(authors__contains=[author_id])
    changes = VersionChange.objects.order_by("path")
    page = list(versions.prefetch_related(Prefetch("changes", queryset=changes), "labels")[: PAGE + 1])
    more = len(page) > PAGE
    page = page[:PAGE]
    return page, (page[-1].number if more else None)


def change_kind(version: Version, change: VersionChange) -> str:
    if version.kind == VersionKind.RESTORE:
        return "restore"
    return _kind(change.existed_before, change.exists_after, change.old_path, change.path)


def _kind(existed_before: bool, exists_after: bool, old_path: str, path: str) -> str:
    """What happened to a file between two of its states."""
    if not existed_before:
        return "create"
    if not exists_after:
        return "delete"
    return "move" if old_path != path else "edit"


def version_get(*, project_id: uuid.UUID, number: int) -> Version:
    version = Version.objects.filter(project_id=project_id, number=number).first() if number < 2**62 else None
    if version is None:
        raise VersionNotFound(details={"version": number})
    return version


def state_at(*, project_id: uuid.UUID, number: int) -> dict[int, FileState]:
    """Every file the project had when version ``number`` ended, by file id."""
    rows = (
        VersionChange.objects.filter(project_id=project_id, number__lte=number)
        .order_by("file_id", "-number")
        .distinct("file_id")
        .values_list("file_id", "path", "file_kind", "sha_after", "exists_after")
    )
    return {
        file_id: FileState(file_id, path, kind, sha) for file_id, path, kind, sha, exists in rows.iterator() if exists
    }


def state_current(*, project_id: uuid.UUID) -> dict[int, FileState]:
    rows = ProjectFile.objects.filter(project_id=project_id).values_list("pk", "path", "kind", "sha256")
    return {file_id: FileState(file_id, path, kind, sha) for file_id, path, kind, sha in rows}


def file_at(*, project_id: uuid.UUID, number: int, path: str) -> tuple[FileState, bytes]:
    """The file at ``path`` as version ``number`` left it, and its bytes."""
    history_brought_up_to_date(project_id=project_id)
    version_get(project_id=project_id, number=number)
    path = path_normalize(path)
    state = next((item for item in state_at(project_id=project_id, number=number).values() if item.path == path), None)
    if state is None:
        raise FileNotFound(details={"path": path, "version": number})
    return state, content_of(state)


def content_of(state: FileState) -> bytes:
    if state.file_kind == FileKind.TEXT:
        return text_of(state.sha256).encode("utf-8")
    return asset_storage().read(state.sha256)


def diff_between(
    *, project_id: uuid.UUID, number: int, against: int | None, path: str | None = None
) -> tuple[list[FileDiff], int, int | None]:
    """Each file that differs between version ``number`` and ``against`` (``None``: the current files), the
    earlier of the two as ``old``; with ``path``, only the file that has (or had) it. Returns the diffs and
    the two sides' version numbers, earlier first (``None`` for the current files)."""
    history_brought_up_to_date(project_id=project_id)
    version_get(project_id=project_id, number=number)
    if against is not None:
        version_get(project_id=project_id, number=against)
    first, second = (number, against) if against is None or against >= number else (against, number)
    old = state_at(project_id=project_id, number=first)
    new = state_current(project_id=project_id) if second is None else state_at(project_id=project_id, number=second)
    path = path_normalize(path) if path else None
    diffs = []
    for file_id in sorted(old.keys() | new.keys(), key=lambda key: (new.get(key) or old.get(key)).path):
        before, after = old.get(file_id), new.get(file_id)
        if before is not None and after is not None and (before.path, before.sha256) == (after.path, after.sha256):
            continue
        if path is not None and path not in {state.path for state in (before, after) if state is not None}:
            continue
        diffs.append(_file_diff(before, after))
    return diffs, first, second


def _file_diff(before: FileState | None, after: FileState | None) -> FileDiff:
    latest, earliest = after or before, before or after
    kind = _kind(before is not None, after is not None, earliest.path, latest.path)
    return FileDiff(latest.path, earliest.path, kind, latest.file_kind, before, after)


def unified_diff(diffs: list[FileDiff]) -> str:
    """The diffs as one unified diff, as ``git diff`` writes it (binary files named, not shown)."""
    parts = []
    for diff in diffs:
        old_name = f"a/{diff.old.path}" if diff.old else "/dev/null"
        new_name = f"b/{diff.new.path}" if diff.new else "/dev/null"
        if diff.file_kind != FileKind.TEXT:
            parts.append(f"Binary files {old_name} and {new_name} differ\n")
            continue
        old_text = text_of(diff.old.sha256) if diff.old else ""
        new_text = text_of(diff.new.sha256) if diff.new else ""
        lines = difflib.unified_diff(
            old_text.splitlines(keepends=True), new_text.splitlines(keepends=True), old_name, new_name
        )
        if diff.kind == "move":
            parts.append(f"rename from {diff.old.path}\nrename to {diff.new.path}\n")
        parts.append(
            "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
        )
    return "".join(parts)


def line_authors(*, project_id: uuid.UUID, file_id: int, first: int, second: int | None) -> list[list[int]]:
    """For each line of the file at ``second`` (``None``: the last version), the authors of the version that
    last changed it after version ``first`` (``[]``: unchanged since ``first``), like ``git blame``."""
    changes = list(
        VersionChange.objects.filter(project_id=project_id, file_id=file_id, number__gt=first)
        .filter(**({} if second is None else {"number__lte": second}))
        .select_related("version")
        .order_by("number")
    )
    base = (
        VersionChange.objects.filter(project_id=project_id, file_id=file_id, number__lte=first)
        .order_by("-number")
        .values_list("sha_after", "exists_after")
        .first()
    )
    lines = text_of(base[0]).splitlines() if base and base[1] else []
    authors: list[list[int]] = [[] for _ in lines]
    # Each of the last BLAME_VERSIONS versions is a step of its own; anything older, one step by its authors.
    older, recent = changes[:-BLAME_VERSIONS], changes[-BLAME_VERSIONS:]
    steps = [(older[-1], sorted({author for change in older for author in change.version.authors}))] if older else []
    steps += [(change, change.version.authors) for change in recent]
    for change, by in steps:
        new_lines = text_of(change.sha_after).splitlines() if change.exists_after else []
        carried: list[list[int]] = []
        for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, lines, new_lines, autojunk=False).get_opcodes():
            carried += authors[a0:a1] if tag == "equal" else [list(by)] * (b1 - b0)
        lines, authors = new_lines, carried
    return authors
