"""What Collaboration's writes announce, for the live layer to tell open pages.

The services sit below the live layer (``collaboration/live/``), so they never import it: they send these, and
the live layer's relay (``collaboration/live/relay.py``) is connected to them when the app is ready
(``collaboration/apps.py``).

- ``update_stored``: sent inside the transaction that stored an update (a request's edit, a reconciliation
  during a capture); a receiver acts only once it commits. kwargs: project_id, file_id, batch (a
  ``BatchStored``: what was stored, from which sequence number).
- ``project_changed``: sent after commit; what every member's open page shows of the project changed
  (``"comments"``). kwargs: project_id, what.
"""

import uuid

from django.db import transaction
from django.dispatch import Signal

update_stored = Signal()
project_changed = Signal()


def update_stored_send(*, project_id: uuid.UUID, file_id: int, batch) -> None:
    update_stored.send(sender=None, project_id=project_id, file_id=file_id, batch=batch)


def project_changed_on_commit(*, project_id: uuid.UUID, what: str) -> None:
    transaction.on_commit(lambda: project_changed.send(sender=None, project_id=project_id, what=what))
