"""The base of every anticipated failure in Quire.

Each app defines ``<App>Error(QuireError)`` and one subclass per failure. The
class carries its stable ``code`` and HTTP status; its docstring is the default
message. Interfaces (DRF, views, commands) turn them into responses or exit codes.
"""

from typing import Any, ClassVar


class QuireError(Exception):
    """Something went wrong."""

    code: ClassVar[str] = "error"
    status_code: ClassVar[int] = 400

    def __init__(
        self,
        message: str | None = None,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ):
        self.message = message or (self.__doc__ or self.code).strip().splitlines()[0]
        self.details = details or {}
        self.headers = headers or {}
        super().__init__(self.message)


class NotFound(QuireError):
    """Not found."""

    code = "not_found"
    status_code = 404


class PermissionDenied(QuireError):
    """You may not do that."""

    code = "permission_denied"
    status_code = 403


class PayloadTooLarge(QuireError):
    """The request body is larger than this endpoint accepts."""

    code = "payload_too_large"
    status_code = 413


class UnsupportedMediaType(QuireError):
    """This endpoint does not accept that content type."""

    code = "unsupported_media_type"
    status_code = 415
