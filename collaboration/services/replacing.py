"""Replacing a document's whole text (an API client's ``PUT``, an upload): an edit like any other.

The new text becomes a server-origin Yjs update computed as a diff against the log's current state, so
authors typing in the document at that moment keep their keystrokes where the new text did not touch
them, and receive the change live. The text is projected into Workspace before the answer.
"""

import uuid

from django.db import transaction

from access import facade as access
from collaboration import signals
from collaboration.models import UpdateOrigin
from collaboration.services.opened import document_open
from collaboration.services.outcomes import BatchStored, Outcome, Verdict
from collaboration.ydoc import text_replace
from workspace import facade as workspace


def text_edit(
    *, actor_id: int, project_id: uuid.UUID, path: str, text: str, expected_version: int | None = None
) -> BatchStored:
    """Make the document's text ``text``. With ``expected_version``, the document (with every accepted live
    edit projected first) must be at that version, else ``VersionMismatch`` and nothing changes."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    file_id = workspace.document_read(project_id=project_id, path=path).file_id
    with transaction.atomic(durable=True):
        return text_edit_within(
            actor_id=actor_id, project_id=project_id, file_id=file_id, text=text, expected_version=expected_version
        )


def text_edit_within(
    *, actor_id: int, project_id: uuid.UUID, file_id: int, text: str, expected_version: int | None = None
) -> BatchStored:
    """``text_edit`` inside the caller's transaction (several documents replaced in one change: a zip)."""
    opened = document_open(project_id=project_id, file_id=file_id)
    opened.store()  # a reconciliation, if one was due, is its own update
    opened.project()
    workspace.document_version_require(project_id=project_id, file_id=file_id, expected_version=expected_version)
    update = text_replace(opened.doc, text)
    if update is not None:
        opened.add(update, UpdateOrigin.SERVER, actor_id)
    opened.store()
    opened.project()
    verdict = Verdict(Outcome.STORED if update is not None else Outcome.CONTAINED)
    batch = opened.batch([verdict], projected=True)
    signals.update_stored_send(project_id=project_id, file_id=file_id, batch=batch)
    transaction.on_commit(opened.keep)
    return batch
