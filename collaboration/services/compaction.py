"""Compaction: folding a log's updates into its snapshot, so that loading a document stays cheap.

The snapshot is the merged state of every update up to ``snapshot_seq``; folding replaces the rows it
covers with that one state. Yjs merges are exact, so the text (and what a capture sees) is unchanged.
"""

from datetime import timedelta

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from collaboration.log import documents, log_doc
from collaboration.models import AcceptedUpdate, DocumentLog


def log_compact(*, file_id: int) -> int:
    """Fold the whole log into the snapshot and drop the folded updates; returns how many were dropped."""
    with transaction.atomic(durable=True):
        log = DocumentLog.objects.select_for_update().filter(file_id=file_id).first()
        if log is None:
            return 0
        doc = log_doc(log)
        log.snapshot, log.snapshot_seq = doc.get_update(), log.last_seq
        log.save(update_fields=["snapshot", "snapshot_seq"])
        dropped, _ = AcceptedUpdate.objects.filter(log=log, seq__lte=log.snapshot_seq).delete()
    documents.put(file_id, log.last_seq, doc)
    return dropped


def logs_compact_due(*, quiet_for: timedelta = timedelta(minutes=5), limit: int = 100) -> int:
    """Compact the logs that still keep update rows and saw no update for ``quiet_for``; returns how many.

    A quiet log is one nobody is typing in, so folding it holds no editor up.
    """
    cutoff = timezone.now() - quiet_for
    has_rows = Exists(AcceptedUpdate.objects.filter(log=OuterRef("pk")))
    due = DocumentLog.objects.filter(has_rows, updated_at__lt=cutoff).order_by("updated_at")
    file_ids = list(due.values_list("file_id", flat=True)[:limit])
    for file_id in file_ids:
        log_compact(file_id=file_id)
    return len(file_ids)
