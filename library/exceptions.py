from foundation.errors import NotFound, PayloadTooLarge, QuireError


class LibraryError(QuireError):
    """The library refused the request."""


class LibraryDocumentNotFound(NotFound):
    """No library document with that id in this project."""

    code = "library_document_not_found"


class SearchQueryInvalid(LibraryError):
    """The search query cannot be used."""

    code = "search_query_invalid"


class IfMatchRequired(LibraryError):
    """Send If-Match with the document revision your replacement is based on ("<revision>")."""

    code = "if_match_required"
    status_code = 428


class LibraryVersionInvalid(LibraryError):
    """The version must be a version id of this document."""

    code = "library_version_invalid"


class RevisionMismatch(LibraryError):
    """The document changed since the revision you sent; fetch it and decide again."""

    code = "revision_mismatch"
    status_code = 412


class NotAPdf(LibraryError):
    """The body is not a PDF."""

    code = "not_a_pdf"


class PdfUnreadable(LibraryError):
    """The PDF is damaged beyond reading."""

    code = "pdf_unreadable"


class PdfEncrypted(LibraryError):
    """The PDF is encrypted with a password; upload an unprotected copy."""

    code = "pdf_encrypted"


class PdfEmpty(LibraryError):
    """The PDF has no pages."""

    code = "pdf_empty"


class PdfTooLarge(PayloadTooLarge):
    """The PDF is larger than the library accepts."""

    code = "pdf_too_large"
