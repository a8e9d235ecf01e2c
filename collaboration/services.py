"""Accepting Yjs updates and projecting them to Workspace text, under the project fence.

Projection is eager: the transaction that accepts an update also writes the
resulting text into Workspace (bumping the project generation), so the text a
capture freezes always reflects every accepted update. Workspace remains the
authority for text changed by other means (a raw ``PUT``); before a client's
update is applied the log is reconciled with that text by a server-origin
update computed from a diff, which Yjs merges like any concurrent edit.
"""

import hashlib
import uuid
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F
from pycrdt import Doc

from access import facade as access
from collaboration.exceptions import UpdateTooLarge
from collaboration.models import AcceptedUpdate, DocumentLog, UpdateOrigin
from collaboration.ydoc import doc_build, doc_text, text_replace, update_apply_strict
from workspace import facade as workspace

MAX_UPDATE_BYTES = 1024 * 1024
SNAPSHOT_EVERY = 64


@dataclass(frozen=True)
class Accepted:
    seq: int
    text_sha256: str
    changed: bool


def _server_client_id(file_id: int) -> int:
    # A fixed id per document is safe because every server edit happens under
    # the fence against the latest state; it also makes the reconciling edit
    # deterministic, so the state a client downloads matches what is later stored.
    return int.from_bytes(hashlib.sha256(f"quire-server:{file_id}".encode()).digest()[:4], "big") >> 1


def log_doc(log: DocumentLog) -> Doc:
    """Rebuild the document from its snapshot and the updates after it."""
    updates: list[bytes] = []
    if log.pk:
        rows = log.updates.filter(seq__gt=log.snapshot_seq).order_by("seq").values_list("update", flat=True)
        updates = [bytes(update) for update in rows]
    return doc_build(bytes(log.snapshot), updates, client_id=_server_client_id(log.file_id))


@dataclass
class _OpenDocument:
    document: workspace.DocumentText
    log: DocumentLog
    doc: Doc
    pending: list[tuple[bytes, str, int | None]] = field(default_factory=list)

    def add(self, update: bytes, origin: str, actor_id: int | None) -> None:
        self.pending.append((update, origin, actor_id))


def _open(project_id: uuid.UUID, path: str) -> _OpenDocument:
    """Inside the fence: the document, its log (locked), and a Doc reconciled with Workspace's text.

    Nothing is written yet; ``_commit`` persists the pending updates, if any.
    """
    workspace.fence_enter(project_id=project_id)
    document = workspace.document_read(project_id=project_id, path=path)
    log = DocumentLog.objects.select_for_update().filter(file_id=document.file_id).first()
    log = log or DocumentLog(file_id=document.file_id, project_id=project_id)
    opened = _OpenDocument(document, log, log_doc(log))
    reconcile = text_replace(opened.doc, document.text)
    if reconcile is not None:
        opened.add(reconcile, UpdateOrigin.SERVER, None)
    return opened


def _commit(opened: _OpenDocument, project_id: uuid.UUID) -> Accepted:
    """Append the pending updates, project the text into Workspace, snapshot when due."""
    log, doc = opened.log, opened.doc
    if not opened.pending:
        return Accepted(seq=log.last_seq, text_sha256=opened.document.sha256, changed=False)
    if log.pk is None:
        log.save()
    for update, origin, actor_id in opened.pending:
        log.last_seq += 1
        AcceptedUpdate.objects.create(log=log, seq=log.last_seq, update=update, origin=origin, actor_id=actor_id)
    text = doc_text(doc)
    digest = opened.document.sha256
    if text != opened.document.text:
        digest = workspace.document_text_store(project_id=project_id, path=opened.document.path, text=text).sha256
    log.projected_seq = log.last_seq
    if log.last_seq - log.snapshot_seq >= SNAPSHOT_EVERY:
        log.snapshot, log.snapshot_seq = doc.get_update(), log.last_seq
    log.save(update_fields=["last_seq", "projected_seq", "snapshot", "snapshot_seq"])
    return Accepted(seq=log.last_seq, text_sha256=digest, changed=text != opened.document.text)


def update_accept(*, actor_id: int, project_id: uuid.UUID, path: str, update: bytes) -> Accepted:
    """Accept one binary Yjs update from a client. Nothing is stored when it is refused.

    An update the document already contains (a client's retry) is acknowledged
    without being stored again.
    """
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    if len(update) > MAX_UPDATE_BYTES:
        raise UpdateTooLarge(details={"limit_bytes": MAX_UPDATE_BYTES})
    with transaction.atomic():
        opened = _open(project_id, path)
        before = opened.doc.get_update()
        update_apply_strict(opened.doc, update)
        if opened.doc.get_update() == before:
            opened.pending.clear()  # nothing new: store nothing, not even the reconciling edit
        else:
            opened.add(update, UpdateOrigin.CLIENT, actor_id)
        return _commit(opened, project_id)


def text_edit(*, actor_id: int, project_id: uuid.UUID, path: str, text: str) -> Accepted:
    """Save an edit from the web editor: the server turns the new text into a Yjs update."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    with transaction.atomic():
        opened = _open(project_id, path)
        update = text_replace(opened.doc, text)
        if update is not None:
            opened.add(update, UpdateOrigin.SERVER, actor_id)
        return _commit(opened, project_id)


def state_read(*, actor_id: int, project_id: uuid.UUID, path: str) -> bytes:
    """The document's full Yjs state for a client to start from, reconciled with Workspace's text.

    Read-only: the reconciling edit is deterministic (fixed server client id), so
    the one a later accept persists is the same update the client already has.
    """
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    document = workspace.document_read(project_id=project_id, path=path)
    log = DocumentLog.objects.filter(file_id=document.file_id).first() or DocumentLog(file_id=document.file_id)
    doc = log_doc(log)
    text_replace(doc, document.text)
    return doc.get_update()


def projection_read(*, file_id: int) -> str:
    """The text as of every accepted update of a document, computed from the log alone."""
    log = DocumentLog.objects.filter(file_id=file_id).first() or DocumentLog(file_id=file_id)
    return doc_text(log_doc(log))


def projection_pending(*, project_id: uuid.UUID) -> int:
    """Project any accepted updates not yet reflected in Workspace; returns how many documents needed it.

    Runs inside the capture transaction (the caller holds the fence). Because
    acceptance projects eagerly, this is normally one indexed query finding nothing.
    """
    lagging = list(DocumentLog.objects.filter(project_id=project_id, projected_seq__lt=F("last_seq")))
    for log in lagging:
        path = workspace.document_path_of(project_id=project_id, file_id=log.file_id)
        if path is not None:
            workspace.document_text_store(project_id=project_id, path=path, text=doc_text(log_doc(log)))
        log.projected_seq = log.last_seq
        log.save(update_fields=["projected_seq"])
    return len(lagging)


def log_compact(*, file_id: int) -> None:
    """Fold the whole log into the snapshot and drop the folded updates; the text does not change."""
    with transaction.atomic():
        log = DocumentLog.objects.select_for_update().filter(file_id=file_id).first()
        if log is None:
            return
        log.snapshot, log.snapshot_seq = log_doc(log).get_update(), log.last_seq
        log.save(update_fields=["snapshot", "snapshot_seq"])
        log.updates.filter(seq__lte=log.snapshot_seq).delete()
