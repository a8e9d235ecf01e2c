"""Accepting authors' Yjs updates: each is checked, then stored in the log before anyone else sees it.

Live editing hands over every update that arrived for a document while the previous batch was being
stored, so a burst of keystrokes costs one transaction. Updates are taken in order; the first one
refused ends the batch (the caller offers the rest again), because a refused update may have left the
document in hand half-changed, and nothing after it is looked at on that state.

An update is refused when its author may not edit, when it does not decode or depends on changes this
server never accepted, when it touches anything but the shared text, when it inserts a NUL character
(PostgreSQL text cannot hold one), or when it would make the text larger than a text document may be.
An update the document already contains is acknowledged and not stored again.
"""

import uuid

from django.conf import settings
from django.db import transaction

from access import facade as access
from collaboration import signals
from collaboration.exceptions import DocumentTooLarge, InvalidUpdate, UpdateTooLarge
from collaboration.log import documents
from collaboration.models import UpdateOrigin
from collaboration.services.opened import OpenedDocument, document_open
from collaboration.services.outcomes import BatchStored, Outcome, Submitted, Verdict
from collaboration.ydoc import ROOT, update_apply_strict
from workspace import facade as workspace


def max_update_bytes() -> int:
    return settings.COLLAB_MAX_UPDATE_BYTES


def updates_accept(*, project_id: uuid.UUID, file_id: int, submitted: list[Submitted]) -> BatchStored:
    """Check and store a batch of updates in one transaction (see the module's docstring)."""
    editors = _actors_who_may_edit(project_id, {item.actor_id for item in submitted})
    with transaction.atomic(durable=True):
        opened = document_open(project_id=project_id, file_id=file_id)
        verdicts: list[Verdict] = []
        for item in submitted:
            verdicts.append(_accept_one(opened, item, may_edit=item.actor_id in editors))
            if verdicts[-1].outcome == Outcome.REFUSED:
                break
        opened.diverged = verdicts[-1].outcome == Outcome.REFUSED  # the refused update may be half in the state
        if any(verdict.outcome == Outcome.STORED for verdict in verdicts):
            opened.store(snapshot=not opened.diverged)
        else:
            opened.discard_pending()  # a refused or known update changes nothing, not even by a reconciliation
        state_vector = opened.doc.get_state()
    opened.keep()
    return opened.batch(verdicts, state_vector=state_vector)


def update_accept_and_project(*, actor_id: int, project_id: uuid.UUID, path: str, update: bytes) -> BatchStored:
    """One update from an API client, projected into Workspace before the answer (read-after-write).

    Raises ``InvalidUpdate``, ``UpdateTooLarge``, ``DocumentTooLarge``, or access errors.
    """
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    document = workspace.document_read(project_id=project_id, path=path)
    with transaction.atomic(durable=True):
        opened = document_open(project_id=project_id, file_id=document.file_id)
        verdict = _accept_one(opened, Submitted(actor_id, update), may_edit=True)
        if verdict.outcome == Outcome.REFUSED:
            documents.drop(document.file_id)
            raise _REFUSALS[verdict.code](verdict.message)
        if verdict.outcome == Outcome.CONTAINED:
            opened.discard_pending()
        opened.store()
        opened.project()
        batch = opened.batch([verdict], projected=True)
        signals.update_stored_send(project_id=project_id, file_id=document.file_id, batch=batch)
    opened.keep()
    return batch


def _actors_who_may_edit(project_id: uuid.UUID, actor_ids: set[int]) -> set[int]:
    roles = access.roles_in_project(project_id=project_id, user_ids=actor_ids)
    return {actor for actor, role in roles.items() if access.role_permits(role, access.Permission.EDIT)}


def _accept_one(opened: OpenedDocument, item: Submitted, *, may_edit: bool) -> Verdict:
    if not may_edit:
        return Verdict(Outcome.REFUSED, "forbidden", "You may read this document but not change it.")
    if len(item.update) > max_update_bytes():
        return Verdict(Outcome.REFUSED, UpdateTooLarge.code, f"An update may have at most {max_update_bytes()} bytes.")
    changes = _Changes(opened.doc)
    try:
        update_apply_strict(opened.doc, item.update)
    except InvalidUpdate as exc:
        return Verdict(Outcome.REFUSED, InvalidUpdate.code, exc.message)
    finally:
        changes.unobserve()
    if not changes.seen:
        return Verdict(Outcome.CONTAINED)
    if any("\x00" in text for text in changes.inserted):
        return Verdict(Outcome.REFUSED, InvalidUpdate.code, "A document cannot hold the NUL character.")
    limit = workspace.text_limit_bytes()
    if len(opened.doc[ROOT]) > limit:  # pycrdt measures text in UTF-8 bytes
        return Verdict(Outcome.REFUSED, DocumentTooLarge.code, f"A text document may have at most {limit} bytes.")
    opened.add(item.update, UpdateOrigin.CLIENT, item.actor_id)
    return Verdict(Outcome.STORED)


class _Changes:
    """Whether applying an update changed the document, and the text it inserted."""

    def __init__(self, doc):
        self.seen, self.inserted = False, []
        self._doc, self._text = doc, doc[ROOT]
        self._doc_subscription = doc.observe(self._on_transaction)
        self._text_subscription = self._text.observe(self._on_text)

    def _on_transaction(self, _event) -> None:
        self.seen = True

    def _on_text(self, event) -> None:
        self.inserted.extend(part["insert"] for part in event.delta if isinstance(part.get("insert"), str))

    def unobserve(self) -> None:
        self._doc.unobserve(self._doc_subscription)
        self._text.unobserve(self._text_subscription)


_REFUSALS = {
    InvalidUpdate.code: InvalidUpdate,
    UpdateTooLarge.code: UpdateTooLarge,
    DocumentTooLarge.code: DocumentTooLarge,
    "forbidden": access.ActionForbidden,
}
