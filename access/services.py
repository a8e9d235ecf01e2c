import uuid

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone

from access import selectors
from access.exceptions import (
    ActionForbidden,
    InvalidRole,
    LastOwner,
    MemberNotFound,
    ProjectNotFound,
    UserNotFound,
)
from access.models import ApiToken, Permission, ProjectGrant, Role, role_permits
from access.signals import members_changed_on_commit
from access.tokens import token_generate


def permission_require(*, user_id: int | None, project_id: uuid.UUID, permission: str) -> str:
    """Return the caller's role, or raise ``ProjectNotFound`` (cannot see it) / ``ActionForbidden``."""
    role = selectors.role_of(user_id=user_id, project_id=project_id) if user_id else None
    if role is None:
        raise ProjectNotFound()
    if not role_permits(role, permission):
        raise ActionForbidden()
    return role


def grant_owner(*, project_id: uuid.UUID, user_id: int) -> None:
    """Make the creator of a new project its owner (joins the caller's transaction)."""
    ProjectGrant.objects.create(project_id=project_id, user_id=user_id, role=Role.OWNER)


def member_set(*, actor_id: int, project_id: uuid.UUID, username: str, role: str) -> tuple[ProjectGrant, bool]:
    """Grant or change a member's role; returns the grant and whether it is new."""
    permission_require(user_id=actor_id, project_id=project_id, permission=Permission.MANAGE_MEMBERS)
    if role not in Role.values:
        raise InvalidRole(details={"role": role, "allowed": list(Role.values)})
    user = selectors.user_by_username(username)
    if user is None:
        raise UserNotFound(details={"username": username})
    try:
        return _grant_or_change(project_id=project_id, user=user, role=role)
    except IntegrityError:  # the same member was added concurrently; that grant now exists and is changed
        return _grant_or_change(project_id=project_id, user=user, role=role)


def _grant_or_change(*, project_id: uuid.UUID, user, role: str) -> tuple[ProjectGrant, bool]:
    with transaction.atomic():
        members_changed_on_commit(project_id=project_id)
        grants = list(ProjectGrant.objects.select_for_update().filter(project_id=project_id))
        existing = next((grant for grant in grants if grant.user_id == user.pk), None)
        if existing is None:
            return ProjectGrant.objects.create(project_id=project_id, user=user, role=role), True
        if existing.role == Role.OWNER and role != Role.OWNER:
            _require_another_owner(grants, existing)
        existing.role = role
        existing.save(update_fields=["role"])
        return existing, False


def member_remove(*, actor_id: int, project_id: uuid.UUID, username: str) -> None:
    permission_require(user_id=actor_id, project_id=project_id, permission=Permission.MANAGE_MEMBERS)
    with transaction.atomic(durable=True):
        grants = list(
            ProjectGrant.objects.select_for_update(of=("self",)).filter(project_id=project_id).select_related("user")
        )
        target = next((grant for grant in grants if grant.user.username == username), None)
        if target is None:
            raise MemberNotFound(details={"username": username})
        if target.role == Role.OWNER:
            _require_another_owner(grants, target)
        target.delete()
        members_changed_on_commit(project_id=project_id)


def _require_another_owner(grants: list[ProjectGrant], leaving: ProjectGrant) -> None:
    if not any(grant.role == Role.OWNER and grant.pk != leaving.pk for grant in grants):
        raise LastOwner()


def grants_delete_for_project(*, project_id: uuid.UUID) -> None:
    ProjectGrant.objects.filter(project_id=project_id).delete()
    members_changed_on_commit(project_id=project_id)


def token_create(*, user_id: int, name: str) -> tuple[ApiToken, str]:
    """Create a token; the plaintext is returned once and never stored."""
    plaintext, prefix, digest = token_generate()
    token = ApiToken.objects.create(user_id=user_id, name=name, prefix=prefix, token_sha256=digest)
    return token, plaintext


def token_revoke(*, user_id: int, token_id: int) -> None:
    ApiToken.objects.filter(pk=token_id, user_id=user_id, revoked_at__isnull=True).update(revoked_at=timezone.now())


def user_create(*, username: str, password: str, email: str = "") -> int:
    user = get_user_model().objects.create_user(username=username, password=password, email=email)
    return user.pk
