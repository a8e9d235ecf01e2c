"""A document opened for writing: under the project fence, its log row locked, its Yjs state in hand.

Every write to a document's log goes through here, inside its caller's transaction:

1. ``document_open`` enters the project's mutation fence (the lock a capture also takes, so every update
   stored before a capture's freeze is in what it builds), locks the log row and takes the document's
   state (``collaboration.log``).
2. If Workspace's text changed beside the log (its digest is not the one the log last agreed with), a
   server-origin update reconciling the two is queued first.
3. The caller applies and queues updates; ``store`` appends them to the log and, every
   ``SNAPSHOT_EVERY`` updates, writes the merged state as the log's snapshot.
4. ``project`` writes the log's text into Workspace's row (its version moves on); live editing leaves
   this to ``projection_flush`` a moment after typing pauses, and a capture does it under its own fence.
"""

import hashlib
import logging
import uuid
from dataclasses import dataclass, field

from pycrdt import Doc, merge_updates

from collaboration import log as document_log
from collaboration.exceptions import LiveDocumentNotFound
from collaboration.models import AcceptedUpdate, DocumentLog, UpdateOrigin
from collaboration.services.outcomes import BatchStored, Verdict
from collaboration.ydoc import doc_text, text_replace
from workspace import facade as workspace

logger = logging.getLogger(__name__)


@dataclass
class OpenedDocument:
    project_id: uuid.UUID
    document: workspace.DocumentMeta
    log: DocumentLog
    doc: Doc
    pending: list[tuple[bytes, str, int | None]] = field(default_factory=list)
    stored_updates: list[bytes] = field(default_factory=list)
    stored_from: int = 0  # the first sequence number ``store`` wrote, 0 while it wrote none
    diverged: bool = False  # the state in hand holds something the log does not: it must not be cached

    def add(self, update: bytes, origin: str, actor_id: int | None) -> None:
        self.pending.append((update, origin, actor_id))

    def stored(self) -> bytes | None:
        """Everything ``store`` appended so far, merged into one update (for live editors), or ``None``."""
        return merge_updates(*self.stored_updates) if self.stored_updates else None

    def store(self, *, snapshot: bool = True) -> None:
        """Append the pending updates to the log."""
        if not self.pending:
            return
        log = self.log
        if log.pk is None:
            log.save()
        self.stored_from = self.stored_from or log.last_seq + 1
        rows = []
        for update, origin, actor_id in self.pending:
            log.last_seq += 1
            rows.append(AcceptedUpdate(log=log, seq=log.last_seq, update=update, origin=origin, actor_id=actor_id))
        AcceptedUpdate.objects.bulk_create(rows)
        fields = ["last_seq", "updated_at"]
        if snapshot and log.last_seq - log.snapshot_seq >= document_log.SNAPSHOT_EVERY:
            log.snapshot, log.snapshot_seq = self.doc.get_update(), log.last_seq
            fields += ["snapshot", "snapshot_seq"]
        log.save(update_fields=fields)
        self.stored_updates += [update for update, _, _ in self.pending]
        self.pending = []

    def project(self) -> None:
        """Write the log's text into Workspace's row, if the row does not hold it yet."""
        log = self.log
        if log.pk is None or log.projected_seq == log.last_seq:
            return
        text = doc_text(self.doc)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        if digest != self.document.sha256:  # an unchanged text is no new generation of the project
            workspace.document_text_store(
                project_id=self.project_id, path=self.document.path, text=text, authors=self._authors_unprojected()
            )
        log.projected_seq, log.projected_sha256 = log.last_seq, digest
        log.save(update_fields=["projected_seq", "projected_sha256", "updated_at"])
        self.document = workspace.document_describe(project_id=self.project_id, file_id=self.document.file_id)

    def _authors_unprojected(self) -> list[int]:
        """Who wrote the updates the projection is about to write into Workspace (they are its authors in the
        project's history), the pending ones included."""
        log = self.log
        stored = AcceptedUpdate.objects.filter(log=log, seq__gt=log.projected_seq, seq__lte=log.last_seq)
        authors = set(stored.exclude(actor_id=None).values_list("actor_id", flat=True).distinct())
        return sorted(authors | {actor for _, _, actor in self.pending if actor is not None})

    def batch(self, verdicts: list[Verdict], *, state_vector: bytes | None = None, projected: bool = False):
        """What became of the updates offered, for the caller to relay and acknowledge."""
        return BatchStored(
            verdicts,
            self.stored(),
            self.stored_from,
            self.log.last_seq,
            self.doc.get_state() if state_vector is None else state_vector,
            self.document.sha256 if projected else "",
        )

    def discard_pending(self) -> None:
        """Store none of the queued updates (a reconciliation included): nothing an author sent was taken."""
        self.diverged = self.diverged or bool(self.pending)
        self.pending = []

    def keep(self) -> None:
        """After commit: the state in hand is the log's, so the next writer need not rebuild it."""
        if self.diverged:
            document_log.documents.drop(self.log.file_id)
        else:
            document_log.documents.put(self.log.file_id, self.log.last_seq, self.doc)


def document_open(*, project_id: uuid.UUID, file_id: int) -> OpenedDocument:
    """Inside the caller's transaction: fence, locked log, state, and a reconciling update if one is due.

    Raises ``LiveDocumentNotFound`` when the project has no text document with that id.
    """
    workspace.fence_enter(project_id=project_id)
    document = workspace.document_describe(project_id=project_id, file_id=file_id)
    if document is None:
        raise LiveDocumentNotFound(details={"file_id": file_id})
    # The snapshot (the document's whole state) is read only if the state must be rebuilt.
    log = DocumentLog.objects.select_for_update().defer("snapshot").filter(file_id=file_id).first()
    log = log or DocumentLog(file_id=file_id, project_id=project_id)
    opened = OpenedDocument(project_id, document, log, document_log.log_doc_taken(log))
    _reconcile(opened)
    return opened


def _reconcile(opened: OpenedDocument) -> None:
    log, document = opened.log, opened.document
    if document.sha256 == log.projected_sha256:
        return
    if log.projected_seq != log.last_seq:
        # Text was written beside the log while live edits waited to be projected: Workspace keeps no
        # base to merge them with, so its text wins. Every text write goes through the document keeper,
        # so only a write that bypassed it ends up here.
        logger.warning("document text changed beside its log", extra={"file_id": log.file_id})
    update = text_replace(opened.doc, workspace.document_text_read(sha256=document.sha256))
    if update is not None:
        opened.add(update, UpdateOrigin.SERVER, None)
    log.projected_sha256 = document.sha256
    if log.pk is not None and not opened.pending:
        log.save(update_fields=["projected_sha256", "updated_at"])
