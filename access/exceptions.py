from foundation.errors import NotFound, PermissionDenied, QuireError


class AccessError(QuireError):
    """Access refused."""


class ProjectNotFound(NotFound):
    """Project not found."""

    code = "project_not_found"


class ActionForbidden(PermissionDenied):
    """Your role on this project does not allow that."""

    code = "forbidden"


class UserNotFound(AccessError):
    """No user has that username."""

    code = "user_not_found"
    status_code = 400


class InvalidRole(AccessError):
    """That is not a project role."""

    code = "invalid_role"
    status_code = 400


class LastOwner(AccessError):
    """A project must keep at least one owner."""

    code = "last_owner"
    status_code = 409


class MemberNotFound(NotFound):
    """That user is not a member of this project."""

    code = "member_not_found"
