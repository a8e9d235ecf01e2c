"""Projection: writing a document's text, as of every accepted update, into Workspace's row.

Live editing stores keystrokes in the log and projects a moment after typing pauses (the server process
holding the editors asks, ``projection_flush``); the maintenance loop projects any document left behind
by a process that died (``projections_overdue_flush``); a capture's freeze in Workspace has its keeper
(``collaboration/keeper.py``) project whatever is still pending under the fence (``projection_pending``), so a
build always sees every update accepted before it.
"""

import uuid
from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from collaboration import signals
from collaboration.exceptions import LiveDocumentNotFound
from collaboration.log import log_doc
from collaboration.models import DocumentLog
from collaboration.services.opened import OpenedDocument, document_open
from collaboration.ydoc import doc_text


def projection_flush(*, project_id: uuid.UUID, file_id: int) -> bool:
    """Project the document if it has updates Workspace's row lacks; returns whether it had."""
    if not DocumentLog.objects.filter(file_id=file_id, projected_seq__lt=F("last_seq")).exists():
        return False
    try:
        with transaction.atomic():
            opened = document_open(project_id=project_id, file_id=file_id)
            _store_and_project(opened)
    except LiveDocumentNotFound:
        DocumentLog.objects.filter(file_id=file_id).update(projected_seq=F("last_seq"))  # the file is gone
        return False
    opened.keep()
    return True


def projection_pending(*, project_id: uuid.UUID) -> int:
    """Inside the caller's transaction, the fence held: project every document with updates not yet in
    Workspace's row. Returns how many needed it."""
    lagging = DocumentLog.objects.filter(project_id=project_id, projected_seq__lt=F("last_seq"))
    count = 0
    for file_id in lagging.values_list("file_id", flat=True):
        try:
            opened = document_open(project_id=project_id, file_id=file_id)
        except LiveDocumentNotFound:
            continue
        _store_and_project(opened)
        count += 1
    return count


def _store_and_project(opened: OpenedDocument) -> None:
    """Store a reconciliation if one was due (live editors receive it after commit), then project."""
    opened.store()
    if opened.stored() is not None:
        signals.update_stored_send(
            project_id=opened.project_id,
            file_id=opened.log.file_id,
            batch=opened.batch([]),
        )
    opened.project()


def projections_overdue_flush(*, older_than: timedelta = timedelta(seconds=10)) -> int:
    """Project documents whose last update is older than ``older_than`` and still not projected."""
    cutoff = timezone.now() - older_than
    overdue = DocumentLog.objects.filter(projected_seq__lt=F("last_seq"), updated_at__lt=cutoff)
    return sum(
        projection_flush(project_id=project_id, file_id=file_id)
        for project_id, file_id in overdue.values_list("project_id", "file_id")[:500]
    )


def projection_read(*, file_id: int) -> str:
    """The text as of every accepted update of a document, computed from the log alone."""
    log = DocumentLog.objects.filter(file_id=file_id).first() or DocumentLog(file_id=file_id)
    return doc_text(log_doc(log))
