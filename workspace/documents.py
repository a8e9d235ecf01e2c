"""Text documents whose newest text another context keeps: Collaboration's live Yjs log.

While authors type, each keystroke is an update in Collaboration's log, and Workspace's row holds
the log's projection, brought up to date a moment after typing pauses and always inside a capture.
Collaboration sits above Workspace, so Workspace never imports it: Collaboration registers a
``DocumentKeeper`` when its app is ready, and Workspace asks it

- to bring a document's projection up to date before serving the text or comparing its version (or every
  document of a project, inside a transaction that holds the fence, for a snapshot that must hold every
  accepted edit), and
- to replace a document's text, so that the replacement is an ordinary edit that live editors receive.

Without a registered keeper, Workspace's own row is the whole document.
"""

import uuid
from typing import Protocol


class DocumentKeeper(Protocol):
    def projection_bring_up_to_date(self, *, project_id: uuid.UUID, file_id: int) -> None:
        """Write every accepted edit of the document into Workspace's row (no-op when there is none)."""

    def projections_pending(self, *, project_id: uuid.UUID) -> None:
        """Inside the caller's transaction, the fence held: write every document's accepted edits into
        Workspace's rows."""

    def text_replace(
        self, *, actor_id: int, project_id: uuid.UUID, path: str, text: str, expected_version: int | None
    ) -> None:
        """Make the document's text ``text`` as an edit of ``actor_id``; raises ``VersionMismatch`` when the
        document's version, brought up to date first, is not ``expected_version`` (``None``: any)."""

    def texts_replace(self, *, actor_id: int, project_id: uuid.UUID, texts: list[tuple[int, str]]) -> None:
        """Inside the caller's transaction: make each document (file id) hold its text, as edits of
        ``actor_id`` that its live editors receive once the transaction commits."""


_keeper: DocumentKeeper | None = None


def keeper_register(keeper: DocumentKeeper) -> None:
    global _keeper
    _keeper = keeper


def keeper() -> DocumentKeeper | None:
    return _keeper


def projection_bring_up_to_date(*, project_id: uuid.UUID, file_id: int) -> None:
    if _keeper is not None:
        _keeper.projection_bring_up_to_date(project_id=project_id, file_id=file_id)


def projections_pending(*, project_id: uuid.UUID) -> None:
    if _keeper is not None:
        _keeper.projections_pending(project_id=project_id)
