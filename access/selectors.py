import uuid

from django.contrib.auth import get_user_model

from access.models import ROLE_PERMISSIONS, ApiToken, ProjectGrant, role_permits
from foundation.database.prepared import prepared_cursor


def role_of(*, user_id: int, project_id: uuid.UUID) -> str | None:
    """Read fresh by every permission check (each submission, each finalization): a plain statement, since
    building it through the ORM cost more than running it. A user holds at most one grant per project."""
    with prepared_cursor() as cursor:
        cursor.execute(
            f"SELECT role FROM {ProjectGrant._meta.db_table} WHERE user_id = %s AND project_id = %s",  # noqa: S608
            [user_id, project_id],
        )
        row = cursor.fetchone()
    return row[0] if row else None


def roles_in_project(*, project_id: uuid.UUID, user_ids) -> dict[int, str]:
    grants = ProjectGrant.objects.filter(project_id=project_id, user_id__in=list(user_ids))
    return dict(grants.values_list("user_id", "role"))


def permission_held(*, user_id: int, project_id: uuid.UUID, permission: str) -> bool:
    return role_permits(role_of(user_id=user_id, project_id=project_id), permission)


def _roles_permitting(permission: str) -> list[str]:
    return [role for role in ROLE_PERMISSIONS if role_permits(role, permission)]


def permission_held_sql(*, permission: str, user_sql: str, project_sql: str) -> tuple[str, list]:
    """``permission_held`` as an SQL condition on the caller's columns (``user_sql``, ``project_sql``) with its
    parameters, for a statement that must act only while the permission is held, checked where it writes."""
    roles = _roles_permitting(permission)
    sql = f"""EXISTS (SELECT 1 FROM {ProjectGrant._meta.db_table} AS held
                      WHERE held.user_id = {user_sql} AND held.project_id = {project_sql} AND held.role = ANY(%s))"""  # noqa: S608  the caller's column names; the roles are a parameter
    return sql, [roles]


def project_ids_permitting(*, user_id: int, permission: str):
    roles = _roles_permitting(permission)
    return ProjectGrant.objects.filter(user_id=user_id, role__in=roles).values("project_id")


def project_ids_visible_to(*, user_id: int) -> list[uuid.UUID]:
    return list(
        ProjectGrant.objects.filter(user_id=user_id).order_by("project_id").values_list("project_id", flat=True)
    )


def grants_of_project(*, project_id: uuid.UUID) -> list[ProjectGrant]:
    return list(ProjectGrant.objects.filter(project_id=project_id).select_related("user").order_by("user__username"))


def user_by_username(username: str):
    return get_user_model().objects.filter(username=username, is_active=True).first()


def tokens_of(*, user_id: int) -> list[ApiToken]:
    return list(ApiToken.objects.filter(user_id=user_id).order_by("-created_at"))
