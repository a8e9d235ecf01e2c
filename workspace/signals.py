"""Announcements other contexts may subscribe to. They carry facts, never business rules, and are sent after
the transaction that made the fact commits.

- ``file_written``: a file was created or replaced (an Office upload lets the preview host prewarm its
  conversion). kwargs: project_id, path, kind, sha256, size_bytes, actor_id.
- ``project_changed``: what every member's open page shows of the project changed: its tree (``"tree"``:
  files or folders created, moved, deleted) or its output (``"output"``: a newer build was published).
  kwargs: project_id, what, actor_id (None for the output).
"""

import uuid

from django.db import transaction
from django.dispatch import Signal

file_written = Signal()
project_changed = Signal()

TREE, OUTPUT = "tree", "output"


def tree_changed_send(*, project_id: uuid.UUID, actor_id: int | None) -> None:
    project_changed.send(sender=None, project_id=project_id, what=TREE, actor_id=actor_id)


def tree_changed_on_commit(*, project_id: uuid.UUID, actor_id: int | None) -> None:
    transaction.on_commit(lambda: tree_changed_send(project_id=project_id, actor_id=actor_id))


def output_published_on_commit(*, project_id: uuid.UUID) -> None:
    transaction.on_commit(lambda: project_changed.send(sender=None, project_id=project_id, what=OUTPUT, actor_id=None))
