"""Folding the journal into versions: each ``FileChange`` joins the project's newest version, or starts one.

A change starts a new version when the newest one is closed (a label or a restore ended it), when it is part
of a restore and the newest is not that restore (or the other way round), when someone who is not among the
newest version's authors made it, or when it came more than the history gap after the newest version's last
change. So a version is consecutive edits by the same authors (several, when their typing was projected
together), and each version's lines are its authors'. Within a version each file has one ``VersionChange``:
its state before the version (kept from the first change) and after it (the latest); a file made and
deleted within one version leaves none. Folded journal rows are deleted: the version holds what they said.

Folding is serialised per project by its ``HistoryCursor`` row (never the project fence, which writers
hold); the journal's rows of one project were written under the fence, so their ids follow commit order
and a fold that reads ``id > folded_through`` never skips one committed late.
"""

import difflib
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction

from workspace.exceptions import HistoryContentMissing
from workspace.history.models import FileChange, HistoryCursor, Version, VersionChange, VersionKind
from workspace.models import FileKind, Project, TextContent

BATCH = 5000


def history_gap() -> timedelta:
    return timedelta(seconds=settings.QUIRE_HISTORY_GAP_SECONDS)


def history_fold(*, project_id: uuid.UUID) -> Version | None:
    """Fold every journalled change of the project into its versions; returns its newest version (``None``
    for a project without history or no longer there)."""
    while True:
        with transaction.atomic():
            cursor = _cursor_locked(project_id)
            if cursor is None:
                return None
            changes = list(
                FileChange.objects.filter(project_id=project_id, id__gt=cursor.folded_through).order_by("id")[:BATCH]
            )
            newest = Version.objects.filter(project_id=project_id).order_by("-number").first()
            if not changes:
                return newest
            newest = _Folder(project_id, newest).fold(changes)
            FileChange.objects.filter(project_id=project_id, id__lte=changes[-1].id).delete()
            cursor.folded_through = changes[-1].id
            cursor.save(update_fields=["folded_through"])
        if len(changes) < BATCH:
            return newest


def histories_fold_pending(*, limit: int = 200) -> int:
    """The maintenance loop's step: fold the journal of every project that has unfolded changes (so the
    journal stays short however rarely anyone reads history); returns how many projects."""
    project_ids = list(FileChange.objects.values_list("project_id", flat=True).distinct()[:limit])
    for project_id in project_ids:
        if history_fold(project_id=project_id) is None:  # the project is gone: its journal with it
            FileChange.objects.filter(project_id=project_id).delete()
    return len(project_ids)


def version_close(*, project_id: uuid.UUID) -> Version | None:
    """Inside the caller's transaction, the fence held: fold, then close the newest version (a label names
    it; a restore starts after it). Returns it."""
    newest = history_fold(project_id=project_id)
    if newest is not None and not newest.closed:
        newest.closed = True
        newest.save(update_fields=["closed"])
    return newest


def _cursor_locked(project_id: uuid.UUID) -> HistoryCursor | None:
    """The project's cursor, locked; ``None`` once the project is gone (its delete holds the lock till then)."""
    cursor = HistoryCursor.objects.select_for_update().filter(project_id=project_id).first()
    if cursor is not None or not Project.objects.filter(pk=project_id).exists():
        return cursor
    HistoryCursor.objects.bulk_create([HistoryCursor(project_id=project_id)], ignore_conflicts=True)
    return HistoryCursor.objects.select_for_update().filter(project_id=project_id).first()


class _Folder:
    def __init__(self, project_id: uuid.UUID, newest: Version | None):
        self.project_id = project_id
        self.version = newest
        self.touched: dict[tuple[int, int], VersionChange] = {}
        self.gap = history_gap()

    def fold(self, changes: list[FileChange]) -> Version:
        for change in changes:
            if self._starts_version(change):
                self._version_start(change)
            version = self.version
            version.ended_at = max(version.ended_at, change.at)
            version.authors = sorted(set(version.authors) | set(change.actors))
            version.save(update_fields=["ended_at", "authors"])
            self._file_change_fold(change)
        for file_change in self.touched.values():
            self._file_change_save(file_change)
        return self.version

    def _starts_version(self, change: FileChange) -> bool:
        version = self.version
        if version is None or version.closed:
            return True
        if change.restore_of is not None or version.kind == VersionKind.RESTORE:
            return version.restored_from != change.restore_of
        if not set(change.actors) <= set(version.authors):  # someone else's change is a version of its own
            return True
        return change.at - version.ended_at > self.gap

    def _version_start(self, change: FileChange) -> None:
        number = self.version.number + 1 if self.version is not None else 1
        if self.version is not None and change.restore_of is None and self.version.kind == VersionKind.RESTORE:
            self.version.closed = True  # a restore is a version of its own
            self.version.save(update_fields=["closed"])
        self.version = Version.objects.create(
            project_id=self.project_id,
            number=number,
            kind=VersionKind.RESTORE if change.restore_of is not None else VersionKind.EDIT,
            restored_from=change.restore_of,
            started_at=change.at,
            ended_at=change.at,
            authors=[],
        )

    def _file_change_fold(self, change: FileChange) -> None:
        key = (self.version.pk, change.file_id)
        folded = self.touched.get(key)
        if folded is None:
            folded = VersionChange.objects.filter(version=self.version, file_id=change.file_id).first()
        if folded is None:
            inserted = change.operation == "I"
            folded = VersionChange(
                version=self.version,
                project_id=self.project_id,
                number=self.version.number,
                file_id=change.file_id,
                old_path="" if inserted else change.old_path,
                existed_before=not inserted,
                sha_before="" if inserted else change.old_sha256,
            )
        folded.file_kind = change.file_kind
        folded.path = change.path
        folded.exists_after = change.operation != "D"
        folded.sha_after = change.sha256
        if not folded.old_path:
            folded.old_path = change.path
        self.touched[key] = folded

    def _file_change_save(self, folded: VersionChange) -> None:
        if not folded.existed_before and not folded.exists_after:  # made and deleted within the version
            if folded.pk is not None:
                folded.delete()
            return
        folded.added, folded.removed = lines_changed(folded)
        folded.save()


def lines_changed(change: VersionChange) -> tuple[int, int]:
    """Lines added and removed by the change (0, 0 for an asset)."""
    if change.file_kind != FileKind.TEXT:
        return 0, 0
    before = text_of(change.sha_before, strict=False) if change.existed_before else ""
    after = text_of(change.sha_after, strict=False) if change.exists_after else ""
    return lines_counted(before, after)


def lines_counted(before: str, after: str) -> tuple[int, int]:
    old, new = before.splitlines(), after.splitlines()
    added = removed = 0
    for tag, a0, a1, b0, b1 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += a1 - a0
            added += b1 - b0
    return added, removed


def text_of(sha256: str, *, strict: bool = True) -> str:
    """The text with that digest. A version's text the collector took is a broken promise, never an empty file:
    ``HistoryContentMissing``, unless ``strict`` is off (counting lines while folding)."""
    if not sha256:
        return ""
    content = TextContent.objects.filter(sha256=sha256).values_list("content", flat=True).first()
    if content is None:
        if strict:
            raise HistoryContentMissing(details={"sha256": sha256})
        return ""
    return content
