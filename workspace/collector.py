"""Collecting content nothing refers to: text rows and asset bytes that no file and no live snapshot pin names.

Asset bytes are named by files and by the files of projects' outputs (their PDFs, logs, SyncTeX data); text
and asset content alike by the project's history (a version's files, and journalled changes not yet folded).
A capture pins the digests it froze (workspace/snapshots.py) and reads their bytes after it has left the
fence; a file deleted meanwhile must not take them with it. So content is kept while any file *or any
unexpired pin* names it, and a pin left by a preparation that died is reaped once it expires.

Content is deleted only after it has been unreferenced for ``GRACE`` (``OrphanedContent`` remembers since
when), so a reader that looked a file up just before its content was replaced still finds the old bytes.
Writers store content before they commit the file that names it, so content stored or reused within
``GRACE`` is kept too: a text row's ``created_at`` is refreshed on reuse under a row lock the DELETE waits
for; an asset's modification time is refreshed by ``put``. An asset is first moved aside (after which a
``put`` writes it anew), then its modification time and references are read again, and it is put back if
either says it is in use: a writer either refreshed it before the move, or committed its file before the
second look, or writes new bytes after the move.

Each pass reads every text row and every stored asset once: fine for one deployment's projects; a
larger store would keep the orphan marks from the writes instead.
"""

import time
from datetime import timedelta
from itertools import islice

from django.db import connection
from django.utils import timezone

from workspace.history.models import FileChange, VersionChange
from workspace.models import FileKind, OrphanedContent, OutputArtifact, ProjectFile, SnapshotPin, TextContent
from workspace.storage import asset_storage

GRACE = timedelta(hours=1)  # far longer than any request takes from storing content to committing its file
BATCH = 1000

_FILES, _PINS, _TEXTS = ProjectFile._meta.db_table, SnapshotPin._meta.db_table, TextContent._meta.db_table
_VERSIONED, _JOURNAL = VersionChange._meta.db_table, FileChange._meta.db_table
_TEXT_UNREFERENCED = f"""
    NOT EXISTS (SELECT FROM {_FILES} AS file WHERE file.sha256 = content.sha256)
    AND NOT EXISTS (SELECT FROM {_VERSIONED} AS version WHERE version.sha_after = content.sha256)
    AND NOT EXISTS (SELECT FROM {_JOURNAL} AS change WHERE change.sha256 = content.sha256)
    AND NOT EXISTS (
        SELECT FROM {_PINS} AS pin WHERE pin.digests @> ARRAY[content.sha256]::varchar[] AND pin.expires_at > now()
    )
"""  # noqa: S608  our tables


def pins_expired_reap() -> int:
    """Delete the pins whose deadline has passed: their capture is long over, finished or dead."""
    return SnapshotPin.objects.filter(expires_at__lte=timezone.now()).delete()[0]


def text_contents_collect(*, grace: timedelta = GRACE) -> int:
    """Delete text rows unreferenced for ``grace`` (and not stored or reused within it); returns how many."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT sha256 FROM {_TEXTS} AS content WHERE {_TEXT_UNREFERENCED}")  # noqa: S608
        unreferenced = {digest for (digest,) in cursor.fetchall()}
    OrphanedContent.objects.filter(kind=FileKind.TEXT).exclude(sha256__in=unreferenced).delete()
    due = _orphans_due(FileKind.TEXT, unreferenced, grace)
    if not due:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(
            f"DELETE FROM {_TEXTS} AS content WHERE sha256 = ANY(%s) AND created_at < clock_timestamp() - %s AND "  # noqa: S608
            f"{_TEXT_UNREFERENCED} RETURNING sha256",
            [sorted(due), grace],
        )
        deleted = [digest for (digest,) in cursor.fetchall()]
    OrphanedContent.objects.filter(kind=FileKind.TEXT, sha256__in=deleted).delete()
    return len(deleted)


def assets_collect(*, grace: timedelta = GRACE) -> int:
    """Delete asset bytes unreferenced for ``grace`` (and not stored or reused within it); returns how many."""
    storage = asset_storage()
    collected = 0
    digests = storage.digests()
    while batch := list(islice(digests, BATCH)):
        referenced = _assets_referenced(batch)
        OrphanedContent.objects.filter(kind=FileKind.ASSET, sha256__in=referenced).delete()
        for digest in _orphans_due(FileKind.ASSET, set(batch) - referenced, grace):
            mtime = storage.condemn(digest)
            if mtime is None:
                continue
            if mtime > time.time() - grace.total_seconds() or _assets_referenced([digest]):
                storage.reprieve(digest)
                continue
            storage.execute(digest)
            OrphanedContent.objects.filter(kind=FileKind.ASSET, sha256=digest).delete()
            collected += 1
    return collected


def _orphans_due(kind: str, unreferenced: set[str], grace: timedelta) -> set[str]:
    """Mark the newly unreferenced; return those unreferenced for longer than ``grace``."""
    OrphanedContent.objects.bulk_create(
        [OrphanedContent(sha256=digest, kind=kind) for digest in unreferenced], ignore_conflicts=True
    )
    cutoff = timezone.now() - grace
    marked = OrphanedContent.objects.filter(kind=kind, sha256__in=unreferenced, orphaned_at__lt=cutoff)
    return set(marked.values_list("sha256", flat=True))


def _assets_referenced(digests: list[str]) -> set[str]:
    files = ProjectFile.objects.filter(kind=FileKind.ASSET, sha256__in=digests).values_list("sha256", flat=True)
    outputs = OutputArtifact.objects.filter(sha256__in=digests).values_list("sha256", flat=True)
    versioned = VersionChange.objects.filter(sha_after__in=digests).values_list("sha_after", flat=True)
    journalled = FileChange.objects.filter(sha256__in=digests).values_list("sha256", flat=True)
    live_pins = SnapshotPin.objects.filter(expires_at__gt=timezone.now(), digests__overlap=digests)
    pinned = {digest for pin in live_pins.values_list("digests", flat=True) for digest in pin}
    return set(files) | set(outputs) | set(versioned) | set(journalled) | (pinned & set(digests))


def content_collect() -> dict[str, int]:
    """The maintenance loop's Workspace step: expired pins first, then what they no longer keep."""
    return {
        "pins_expired": pins_expired_reap(),
        "texts_collected": text_contents_collect(),
        "assets_collected": assets_collect(),
    }
