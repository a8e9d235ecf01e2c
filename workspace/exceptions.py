from foundation.errors import NotFound, PayloadTooLarge, QuireError


class WorkspaceError(QuireError):
    """The workspace refused the change."""


class InvalidPath(WorkspaceError):
    """That path is not allowed."""

    code = "invalid_path"


class PathExists(WorkspaceError):
    """A file already has that path."""

    code = "path_exists"
    status_code = 409


class PathConflict(WorkspaceError):
    """That path would make a file and a folder share a name."""

    code = "path_conflict"
    status_code = 409


class FileNotFound(NotFound):
    """No file has that path in this project."""

    code = "file_not_found"


class VersionMismatch(WorkspaceError):
    """The file changed since the version you sent; fetch it and decide again."""

    code = "version_mismatch"
    status_code = 412


class InvalidText(WorkspaceError):
    """A text document must be valid UTF-8."""

    code = "invalid_utf8"


class TextHasNul(WorkspaceError):
    """A text document must not contain the NUL character (U+0000)."""

    code = "invalid_text"


class FileTooLarge(PayloadTooLarge):
    """The file is larger than the limit for its kind."""

    code = "file_too_large"


class ProjectFull(WorkspaceError):
    """The project has reached its limit."""

    code = "project_limit_reached"
    status_code = 409


class InvalidSettings(WorkspaceError):
    """Those project settings are not valid."""

    code = "invalid_settings"


class NotATextDocument(WorkspaceError):
    """That file is a binary asset, not a text document."""

    code = "not_a_text_document"


class InvalidBundle(WorkspaceError):
    """The bundle cannot become a project."""

    code = "invalid_bundle"


class FolderNotFound(NotFound):
    """No folder has that path in this project."""

    code = "folder_not_found"


class FolderNotEmpty(WorkspaceError):
    """The folder is not empty; delete it with ?recursive=true to delete everything in it."""

    code = "folder_not_empty"
    status_code = 409


class ArchiveConflicts(WorkspaceError):
    """Files with these paths exist already; send ?overwrite=true to replace them."""

    code = "archive_conflicts"
    status_code = 409


class NoOutput(NotFound):
    """The project has no output yet: nobody has built it successfully."""

    code = "no_output"


class OutputFileNotFound(NotFound):
    """The project's output has no such file."""

    code = "output_file_not_found"


class VersionNotFound(NotFound):
    """The project has no version with that number."""

    code = "version_not_found"


class LabelExists(WorkspaceError):
    """The project already has a label with that name."""

    code = "label_exists"
    status_code = 409


class HistoryContentMissing(WorkspaceError):
    """A text a version of the history names is gone from storage."""

    code = "history_content_missing"
    status_code = 500


class RestoreConflict(WorkspaceError):
    """A file kept out of the restore holds a path a restored file needs; restore it too, or move it first."""

    code = "restore_conflict"
    status_code = 409
