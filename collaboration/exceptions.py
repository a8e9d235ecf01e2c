from foundation.errors import PayloadTooLarge, QuireError


class CollaborationError(QuireError):
    """The collaboration update was refused."""


class InvalidUpdate(CollaborationError):
    """The Yjs update does not decode or does not apply."""

    code = "invalid_update"


class UpdateTooLarge(PayloadTooLarge):
    """The Yjs update is larger than the server accepts."""

    code = "update_too_large"


class DocumentTooLarge(CollaborationError):
    """The change would make the document larger than a text document may be."""

    code = "document_too_large"
    status_code = 413


class TooManyConnections(CollaborationError):
    """Too many editors are open: close one (or wait a minute for a closed one to be forgotten)."""

    code = "too_many_connections"
    status_code = 429


class LiveDocumentNotFound(CollaborationError):
    """No such document is open to you."""

    code = "document_not_found"
    status_code = 404


class CommentNotFound(CollaborationError):
    """No such comment thread (or reply) in this project."""

    code = "comment_not_found"
    status_code = 404


class InvalidComment(CollaborationError):
    """A comment is 1 to 10,000 characters of text."""

    code = "invalid_comment"


class InvalidRange(CollaborationError):
    """``from`` and ``to`` must name a stretch of the document's current text: 0 <= from < to <= its length."""

    code = "invalid_range"
