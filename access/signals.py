"""Announcements other contexts may subscribe to, sent after the transaction that made the fact commits.

``members_changed``: a project's members or their roles changed (a grant made, changed or removed, every grant
of a deleted project). kwargs: project_id.
"""

import uuid

from django.db import transaction
from django.dispatch import Signal

members_changed = Signal()


def members_changed_on_commit(*, project_id: uuid.UUID) -> None:
    transaction.on_commit(lambda: members_changed.send(sender=None, project_id=project_id))
