"""Every change to a project, each in its own short transaction under the project fence (see
``workspace/services/content.py``): files, folders, batches of both, projects, and their published output."""

from workspace.services.archives import Unpacked, archive_unpack, project_archive, project_from_archive
from workspace.services.batches import BatchWritten, files_write_batch
from workspace.services.content import (
    PreparedContent,
    content_commit,
    content_prepare,
    fence_enter,
    text_content_store,
    text_prepare,
    version_require,
)
from workspace.services.files import file_convert_to_utf8, file_delete, file_move, file_write
from workspace.services.folders import FolderChanged, folder_create, folder_delete, folder_move
from workspace.services.outputs import (
    BuildOutput,
    OutputFile,
    output_content_present,
    output_content_store,
    output_publish,
)
from workspace.services.projects import (
    project_create,
    project_delete,
    project_update,
    settings_validate,
)

__all__ = [
    "BatchWritten",
    "BuildOutput",
    "FolderChanged",
    "OutputFile",
    "PreparedContent",
    "Unpacked",
    "archive_unpack",
    "content_commit",
    "content_prepare",
    "fence_enter",
    "file_convert_to_utf8",
    "file_delete",
    "file_move",
    "file_write",
    "files_write_batch",
    "folder_create",
    "folder_delete",
    "folder_move",
    "output_content_present",
    "output_content_store",
    "output_publish",
    "project_archive",
    "project_create",
    "project_delete",
    "project_from_archive",
    "project_update",
    "settings_validate",
    "text_content_store",
    "text_prepare",
    "version_require",
]
