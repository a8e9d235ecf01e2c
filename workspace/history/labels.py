"""Labels: a name for the project's text as it is at the moment of labelling ("sent to the journal").

Labelling closes the version in progress, so the label names exactly what the files held then: the next
change, however soon, starts a new version.
"""

import uuid

from django.db import IntegrityError, transaction
from django.utils import timezone

from access import facade as access
from workspace import documents
from workspace.exceptions import InvalidSettings, LabelExists
from workspace.history.folding import version_close
from workspace.history.models import Label, Version
from workspace.history.reading import history_brought_up_to_date
from workspace.services.content import fence_enter

NAME_LIMIT = 200


def label_create(*, actor_id: int, project_id: uuid.UUID, name: str) -> Label:
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    name = (name or "").strip()
    if not name or len(name) > NAME_LIMIT or any(ord(char) < 32 for char in name):
        raise InvalidSettings(
            f"A label is a name of 1 to {NAME_LIMIT} printable characters.", details={"field": "name"}
        )
    history_brought_up_to_date(project_id=project_id)
    try:
        with transaction.atomic(durable=True):
            project = fence_enter(project_id, actors=[actor_id])
            documents.projections_pending(project_id=project_id)
            version = version_close(project_id=project_id) or _empty_version(project)
            return Label.objects.create(project=project, name=name, version=version, created_by_id=actor_id)
    except IntegrityError as exc:
        raise LabelExists(details={"name": name}) from exc


def _empty_version(project) -> Version:
    """A project with no history yet (every file made before history was kept, none since): its first version
    is the state it has, labelled."""
    now = timezone.now()
    return Version.objects.create(project=project, number=1, started_at=now, ended_at=now, closed=True)


def labels_of(*, project_id: uuid.UUID) -> list[Label]:
    return list(Label.objects.filter(project_id=project_id).select_related("version").order_by("-created_at", "-pk"))
