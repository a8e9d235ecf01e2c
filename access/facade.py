"""What other contexts may ask Access. Keyword-only, ids in, frozen values out."""

import uuid
from dataclasses import dataclass

from access import selectors, services, sessions
from access.exceptions import ActionForbidden, ProjectNotFound
from access.models import Permission, Role, role_permits
from access.signals import members_changed

__all__ = [
    "ActionForbidden",
    "Member",
    "Permission",
    "Principal",
    "ProjectNotFound",
    "Role",
    "grant_owner",
    "grants_delete_for_project",
    "member_set",
    "members_changed",
    "members_of",
    "permission_check",
    "permission_held_sql",
    "permission_require",
    "principal_describe",
    "project_ids_permitting",
    "project_ids_visible_to",
    "role_of",
    "role_permits",
    "roles_in_project",
    "sessions_signed_in",
    "still_signed_in",
    "user_colour",
    "user_id_named",
    "user_ids_matching",
    "usernames_of",
]


@dataclass(frozen=True)
class Member:
    user_id: int
    username: str
    role: str


@dataclass(frozen=True)
class Principal:
    user_id: int
    username: str


def permission_check(*, user_id: int | None, project_id: uuid.UUID, permission: str) -> bool:
    """May this principal do ``permission`` on the project? Read fresh on every call."""
    if not user_id:
        return False
    return selectors.permission_held(user_id=user_id, project_id=project_id, permission=permission)


def permission_held_sql(*, permission: str, user_sql: str, project_sql: str) -> tuple[str, list]:
    """``permission_check`` as an SQL condition (with its parameters) on the caller's user and project columns:
    for a write that must happen only while the permission is held, decided in that write's own statement."""
    return selectors.permission_held_sql(permission=permission, user_sql=user_sql, project_sql=project_sql)


def permission_require(*, user_id: int | None, project_id: uuid.UUID, permission: str) -> str:
    """Return the role, or raise ``ProjectNotFound`` (not visible) or ``ActionForbidden`` (not allowed)."""
    return services.permission_require(user_id=user_id, project_id=project_id, permission=permission)


def role_of(*, user_id: int, project_id: uuid.UUID) -> str | None:
    return selectors.role_of(user_id=user_id, project_id=project_id)


def roles_in_project(*, project_id: uuid.UUID, user_ids) -> dict[int, str]:
    """The role of each of these users on the project, in one query; users without a grant are absent."""
    return selectors.roles_in_project(project_id=project_id, user_ids=user_ids)


def project_ids_permitting(*, user_id: int, permission: str):
    """The projects on which the user holds ``permission``, as a subquery for the caller's own query.

    The one answer here that is a query, not values: the database evaluates it inside the caller's
    statement, so a read scoped to what the user may see (a job poll, a download) costs no round
    trip of its own for the check. Use it only as ``…__in=``.
    """
    return selectors.project_ids_permitting(user_id=user_id, permission=permission)


def project_ids_visible_to(*, user_id: int) -> list[uuid.UUID]:
    return selectors.project_ids_visible_to(user_id=user_id)


def member_set(*, actor_id: int, project_id: uuid.UUID, username: str, role: str) -> None:
    """Give ``username`` ``role`` on the project, as ``actor_id`` (who must be allowed to manage members)."""
    services.member_set(actor_id=actor_id, project_id=project_id, username=username, role=role)


def grant_owner(*, project_id: uuid.UUID, user_id: int) -> None:
    services.grant_owner(project_id=project_id, user_id=user_id)


def grants_delete_for_project(*, project_id: uuid.UUID) -> None:
    services.grants_delete_for_project(project_id=project_id)


def members_of(*, project_id: uuid.UUID) -> list[Member]:
    return [
        Member(user_id=grant.user_id, username=grant.user.username, role=grant.role)
        for grant in selectors.grants_of_project(project_id=project_id)
    ]


def principal_describe(*, user_id: int) -> Principal | None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(pk=user_id).only("username").first()
    return Principal(user_id=user.pk, username=user.username) if user else None


# --- credentials of long-lived connections (editor sockets, long-polls) -----------------------------
def sessions_signed_in(*, sessions_by_key: dict[str, int]) -> set[str]:
    """Of these session keys (each with its user), those that still sign that user in: not signed out or
    expired, the user active, the password unchanged since. Asked every access-check interval."""
    return sessions.sessions_signed_in(sessions_by_key)


def still_signed_in(*, user_id: int, session_key: str | None = None, token_id=None) -> bool:
    """Whether a request authenticated by this session or this API token would still be."""
    if token_id is not None:
        return sessions.token_valid(token_id)
    return bool(session_key) and bool(sessions.sessions_signed_in({session_key: user_id}))


PALETTE = ["#d1495b", "#2e86ab", "#3c8d2f", "#8e5ac8", "#d9822b", "#1b998b", "#c2185b", "#5c6bc0"]


def user_colour(*, user_id: int) -> str:
    """The colour a user's cursor, edits and history are shown in, the same on every page."""
    return PALETTE[user_id % len(PALETTE)]


# --- names for listings (the task center and the operators' admin) --------------------------------
def usernames_of(*, user_ids) -> dict[int, str]:
    """Usernames by user id, in one query."""
    from django.contrib.auth import get_user_model

    ids = {user_id for user_id in user_ids if user_id is not None}
    return dict(get_user_model().objects.filter(pk__in=ids).values_list("pk", "username")) if ids else {}


def user_id_named(*, username: str) -> int | None:
    """The id of the user with exactly that username, if there is one."""
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(username=username).values_list("pk", flat=True).first()


def user_ids_matching(*, text: str, limit: int = 500) -> list[int]:
    """Ids of users whose username contains ``text`` (case-insensitive), for operators' searches."""
    from django.contrib.auth import get_user_model

    return list(get_user_model().objects.filter(username__icontains=text).values_list("pk", flat=True)[:limit])
