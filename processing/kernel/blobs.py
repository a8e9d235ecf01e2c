"""Processing bytes in PostgreSQL, deduplicated by (sha256, size)."""

import hashlib
from collections.abc import Callable
from datetime import timedelta

from django.db import connection

from processing.models import ProcessingBlob

# What Processing itself holds a blob by, as a condition on the alias ``blob``: a job's input or warm start, an
# artifact, a staged output, a transfer ticket. Other apps hold blobs too (the Library's versions);
# collectors and the checker ask the keepers they registered (``blob_keeper_register``).
NOT_REFERENCED_BY_PROCESSING = """
    NOT EXISTS (SELECT 1 FROM processing_processingjob WHERE input_blob_id = blob.id)
    AND NOT EXISTS (SELECT 1 FROM processing_processingjob WHERE warm_start_blob_id = blob.id)
    AND NOT EXISTS (SELECT 1 FROM processing_processingartifact WHERE blob_id = blob.id)
    AND NOT EXISTS (SELECT 1 FROM processing_stagedoutput WHERE blob_id = blob.id)
    AND NOT EXISTS (SELECT 1 FROM processing_transferticket WHERE blob_id = blob.id)
"""
# How long an unreferenced blob waits for the reference its writer is about to make, since it was last touched.
BLOB_GRACE = timedelta(hours=1)

# Contexts above Processing that name blobs by id (the Library's versions) register a keeper when their
# app is ready: given candidate blob ids, it returns those it still holds.
BlobKeeper = Callable[[list[int]], set[int]]
_BLOB_KEEPERS: list[BlobKeeper] = []


def blob_keeper_register(keeper: BlobKeeper) -> None:
    if keeper not in _BLOB_KEEPERS:
        _BLOB_KEEPERS.append(keeper)


def blob_ids_kept(blob_ids: list[int]) -> set[int]:
    """Which of these blobs (unreferenced by Processing) a registered keeper still holds."""
    kept: set[int] = set()
    for keeper in _BLOB_KEEPERS:
        kept |= keeper(blob_ids) if blob_ids else set()
    return kept


def blob_put(data: bytes, *, sha256: str | None = None) -> int:
    """Store ``data`` (or find the identical blob) and return its id; every call touches the blob.

    One statement, so concurrent writers of the same bytes converge on one row
    and the retention reaper's grace period restarts for reused bytes.
    """
    digest = sha256 or hashlib.sha256(data).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {ProcessingBlob._meta.db_table} (sha256, size_bytes, data, created_at, touched_at)
            VALUES (%s, %s, %s, now(), now())
            ON CONFLICT (sha256, size_bytes) DO UPDATE SET touched_at = now()
            RETURNING id
            """,  # noqa: S608  the table name is ours, values are parameters
            [digest, len(data), data],
        )
        return cursor.fetchone()[0]


def blob_read(blob_id: int) -> bytes:
    return bytes(ProcessingBlob.objects.values_list("data", flat=True).get(pk=blob_id))


class BlobWindow:
    """``length`` bytes of a blob from ``start``, read a chunk per statement (``substring`` on the column, which
    PostgreSQL serves from the TOAST chunks it needs: the column is stored uncompressed, migration 0022), so a
    download never holds more than a chunk in memory."""

    def __init__(self, blob_id: int, start: int, length: int):
        self._blob_id, self._offset, self._left = blob_id, start, length

    def read(self, size: int) -> bytes:
        size = min(size, self._left)
        if size <= 0:
            return b""
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT substring(data FROM %s FOR %s) FROM {ProcessingBlob._meta.db_table} WHERE id = %s",  # noqa: S608
                [self._offset + 1, size, self._blob_id],
            )
            row = cursor.fetchone()
        if row is None or not row[0]:
            raise ProcessingBlob.DoesNotExist(f"blob {self._blob_id} ended before its length")
        data = bytes(row[0])
        self._offset += len(data)
        self._left -= len(data)
        return data

    def close(self) -> None:
        pass
