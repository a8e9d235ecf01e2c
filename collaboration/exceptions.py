from config.errors import PayloadTooLarge, QuireError


class CollaborationError(QuireError):
    """The collaboration update was refused."""


class InvalidUpdate(CollaborationError):
    """The Yjs update does not decode or does not apply."""

    code = "invalid_update"


class UpdateTooLarge(PayloadTooLarge):
    """The Yjs update is larger than the server accepts."""

    code = "update_too_large"
