"""Reading a document's Yjs state for an editor that connects or resyncs. Nothing is written.

Where Workspace's text changed beside the log, the state is shown reconciled with it: the reconciling
edit is deterministic (a fixed server client id), so the one a later write stores is the very update
the editor already has.
"""

import uuid

from access import facade as access
from collaboration.exceptions import LiveDocumentNotFound
from collaboration.log import document_read_latest, documents, log_doc
from collaboration.ydoc import text_replace
from workspace import facade as workspace


def _read(project_id: uuid.UUID, file_id: int, answer):
    """``answer(doc)`` on the document as an editor should see it."""
    document = workspace.document_describe(project_id=project_id, file_id=file_id)
    if document is None:
        raise LiveDocumentNotFound(details={"file_id": file_id})
    log, doc = document_read_latest(file_id)
    if log is not None and document.sha256 == log.projected_sha256:
        try:
            return answer(doc)
        finally:
            documents.put(file_id, log.last_seq, doc)
    if log is not None:  # the reconciliation is shown on a copy the cache never holds
        documents.put(file_id, log.last_seq, doc)
        doc = log_doc(log)
    text_replace(doc, workspace.document_text_read(sha256=document.sha256))
    return answer(doc)


def live_state_vector(*, project_id: uuid.UUID, file_id: int) -> bytes:
    """The document's state vector, for the sync step 1 an editor is greeted with."""
    return _read(project_id, file_id, lambda doc: doc.get_state())


def live_diff(*, project_id: uuid.UUID, file_id: int, state_vector: bytes) -> bytes:
    """What an editor at ``state_vector`` lacks, as one update (sync step 2)."""
    return _read(project_id, file_id, lambda doc: doc.get_update(state_vector))


def state_read(*, actor_id: int, project_id: uuid.UUID, path: str) -> bytes:
    """An API client's starting point: the document's full state, reconciled with Workspace's text."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.VIEW)
    file_id = workspace.document_read(project_id=project_id, path=path).file_id
    return _read(project_id, file_id, lambda doc: doc.get_update())
