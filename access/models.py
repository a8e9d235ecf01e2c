from django.conf import settings
from django.db import models
from django.db.models import Q


class Role(models.TextChoices):
    OWNER = "owner"
    EDITOR = "editor"
    VIEWER = "viewer"


class Permission(models.TextChoices):
    VIEW = "view"
    EDIT = "edit"
    BUILD = "build"
    EXPORT = "export"
    MANAGE_MEMBERS = "manage_members"
    DELETE = "delete"


ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    Role.OWNER: frozenset(Permission.values),
    Role.EDITOR: frozenset({Permission.VIEW, Permission.EDIT, Permission.BUILD, Permission.EXPORT}),
    Role.VIEWER: frozenset({Permission.VIEW}),
}


def role_permits(role: str | None, permission: str) -> bool:
    return role is not None and permission in ROLE_PERMISSIONS[role]


class ProjectGrant(models.Model):
    """A principal's role on a project. Projects belong to Workspace; Access stores only their id."""

    project_id = models.UUIDField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="project_grants")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project_id", "user"], name="grant_one_per_user_and_project"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="grant_role_known"),
        ]
        indexes = [models.Index(fields=["user", "project_id"], name="grant_by_user")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.role} {self.project_id}"


class ApiToken(models.Model):
    """A personal API token. Only its SHA-256 is stored; the secret is shown once at creation."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True, help_text="Public part, to recognise a token.")
    token_sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(token_sha256__regex=r"^[0-9a-f]{64}$"),  # noqa: S106  a digest pattern, not a password
                name="token_digest_hex",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix} ({self.name})"
