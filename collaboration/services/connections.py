"""Open editor sockets: who may open one, how many at once, and whether each may still stay open.

The limits hold across every server process: each socket is a ``LiveConnection`` row, counted (under a
transaction-scoped advisory lock per user and per document, so two opening at once cannot both take the
last place) when one opens. The process holding a socket refreshes its row; one silent for
``FORGOTTEN_AFTER`` belongs to a process that died and no longer counts.
"""

import hashlib
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from access import facade as access
from collaboration.exceptions import LiveDocumentNotFound, TooManyConnections
from collaboration.models import LiveConnection
from workspace import facade as workspace

FORGOTTEN_AFTER = timedelta(seconds=60)


@dataclass(frozen=True)
class Opened:
    user_id: int
    username: str
    colour: str
    may_edit: bool
    path: str


@dataclass(frozen=True)
class Access:
    """What the users holding sockets on a document (or a project page) may now do there, read fresh."""

    document_exists: bool
    roles: dict[int, str]
    signed_in: frozenset[str]  # the sockets' session keys that still sign their user in

    def signed_out(self, session_key: str) -> bool:
        """Signed out, expired, deactivated, or the password changed since the socket opened."""
        return session_key not in self.signed_in

    def may_view(self, user_id: int) -> bool:
        return self.document_exists and access.role_permits(self.roles.get(user_id), access.Permission.VIEW)

    def may_edit(self, user_id: int) -> bool:
        return self.document_exists and access.role_permits(self.roles.get(user_id), access.Permission.EDIT)


def connection_open(*, connection_id: uuid.UUID, user_id: int, project_id: uuid.UUID, file_id: int) -> Opened:
    """Register a socket for the user on the document.

    Raises ``LiveDocumentNotFound`` when the user may not see the project or it has no such text document
    (the same for both: a stranger learns nothing), ``TooManyConnections`` past a limit.
    """
    role = access.role_of(user_id=user_id, project_id=project_id)
    document = workspace.document_describe(project_id=project_id, file_id=file_id)
    if document is None or not access.role_permits(role, access.Permission.VIEW):
        raise LiveDocumentNotFound()
    principal = access.principal_describe(user_id=user_id)
    with transaction.atomic(durable=True):
        _lock("user", user_id)
        _lock("document", file_id)
        now = timezone.now()
        live = LiveConnection.objects.filter(seen_at__gt=now - FORGOTTEN_AFTER)
        if live.filter(user_id=user_id).count() >= settings.COLLAB_MAX_CONNECTIONS_PER_USER:
            raise TooManyConnections(
                "You have too many editors open; close one and try again.",
                details={"limit": settings.COLLAB_MAX_CONNECTIONS_PER_USER},
            )
        if live.filter(file_id=file_id).count() >= settings.COLLAB_MAX_CONNECTIONS_PER_DOCUMENT:
            raise TooManyConnections(
                "This document has as many editors open as it may have.",
                details={"limit": settings.COLLAB_MAX_CONNECTIONS_PER_DOCUMENT},
            )
        LiveConnection.objects.create(
            id=connection_id, user_id=user_id, project_id=project_id, file_id=file_id, opened_at=now, seen_at=now
        )
    return Opened(
        user_id=user_id,
        username=principal.username if principal else f"user {user_id}",
        colour=access.user_colour(user_id=user_id),
        may_edit=access.role_permits(role, access.Permission.EDIT),
        path=document.path,
    )


def _lock(kind: str, key: int) -> None:
    digest = hashlib.sha256(f"quire-live-{kind}:{key}".encode()).digest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest[:8], "big", signed=True)])


def connection_close(*, connection_id: uuid.UUID) -> None:
    LiveConnection.objects.filter(pk=connection_id).delete()


def live_access(
    *, project_id: uuid.UUID, file_id: int, sessions_by_key: dict[str, int], connection_ids: list[uuid.UUID]
) -> Access:
    """Read what the sockets' users (by their session keys) may do now, and note that the sockets are still open."""
    LiveConnection.objects.filter(pk__in=connection_ids).update(seen_at=timezone.now())
    document = workspace.document_describe(project_id=project_id, file_id=file_id)
    return Access(
        document_exists=document is not None,
        roles=access.roles_in_project(project_id=project_id, user_ids=set(sessions_by_key.values())),
        signed_in=frozenset(access.sessions_signed_in(sessions_by_key=sessions_by_key)),
    )


def connections_forgotten_delete() -> int:
    """Delete the rows of sockets whose process stopped refreshing them (the maintenance loop)."""
    deleted, _ = LiveConnection.objects.filter(seen_at__lt=timezone.now() - FORGOTTEN_AFTER * 10).delete()
    return deleted


def role_of(*, user_id: int, project_id: uuid.UUID) -> str | None:
    """The user's role on the project now (None: not a member, or the project is gone)."""
    return access.role_of(user_id=user_id, project_id=project_id)


def project_access(*, project_id: uuid.UUID, sessions_by_key: dict[str, int]) -> Access:
    """What the users with a project page open (by their session keys) may do there now."""
    return Access(
        document_exists=True,
        roles=access.roles_in_project(project_id=project_id, user_ids=set(sessions_by_key.values())),
        signed_in=frozenset(access.sessions_signed_in(sessions_by_key=sessions_by_key)),
    )
