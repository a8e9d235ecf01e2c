"""What other contexts may ask Workspace. Keyword-only, ids in, frozen values out."""

import uuid
from dataclasses import dataclass

from workspace import collector, documents, limits, provisioning, selectors, services, snapshots
from workspace.exceptions import (
    FileNotFound,
    FileTooLarge,
    InvalidBundle,
    NoOutput,
    NotATextDocument,
    OutputFileNotFound,
    VersionMismatch,
    WorkspaceError,
)
from workspace.history import folding, retention
from workspace.models import FileKind
from workspace.paths import path_normalize
from workspace.provisioning import PreparedProject
from workspace.services import BuildOutput, OutputFile
from workspace.signals import file_written, project_changed
from workspace.snapshots import FrozenFile, FrozenSnapshot, PinnedContentMissing
from workspace.tabs import project_tab_register

__all__ = [
    "BuildOutput",
    "DocumentKeeper",
    "DocumentMeta",
    "DocumentText",
    "FileMeta",
    "FileNotFound",
    "FileTooLarge",
    "FrozenFile",
    "FrozenSnapshot",
    "InvalidBundle",
    "NoOutput",
    "NotATextDocument",
    "OutputFile",
    "OutputFileNotFound",
    "PinnedContentMissing",
    "PreparedProject",
    "ProjectOutput",
    "ProjectSummary",
    "VersionMismatch",
    "WorkspaceError",
    "content_collect",
    "document_describe",
    "document_keeper_register",
    "document_path_of",
    "document_paths_of",
    "document_read",
    "document_text_read",
    "document_text_store",
    "document_version_require",
    "fence_enter",
    "file_content_read",
    "file_meta_for",
    "file_written",
    "output_content_present",
    "output_content_read",
    "output_content_store",
    "output_for",
    "output_publish",
    "pin_release",
    "project_changed",
    "project_describe",
    "project_ids_matching",
    "project_names_of",
    "project_tab_register",
    "provision_commit",
    "provision_prepare",
    "snapshot_contents",
    "snapshot_freeze",
    "text_limit_bytes",
    "version_require",
    "version_snapshot_freeze",
]


@dataclass(frozen=True)
class ProjectSummary:
    id: uuid.UUID
    name: str
    type: str
    entry_path: str
    compiler: str
    generation: int


@dataclass(frozen=True)
class FileMeta:
    """A file as seen by a reader that has been authorized; ``sha256`` is its version."""

    project_id: uuid.UUID
    path: str
    kind: str
    size_bytes: int
    sha256: str


@dataclass(frozen=True)
class DocumentText:
    file_id: int
    path: str
    sha256: str
    text: str
    version: int = 1


@dataclass(frozen=True)
class DocumentMeta:
    """A text document without its text."""

    file_id: int
    project_id: uuid.UUID
    path: str
    sha256: str
    size_bytes: int
    version: int


@dataclass(frozen=True)
class ProjectOutput:
    """A project's current output as a member sees it: who built it when, from which capture, and its files
    (``files[role]``: media type, size and the digest ``output_content_read`` reads)."""

    project_id: uuid.UUID
    job_id: uuid.UUID
    operation: str
    built_by_id: int
    built_at: object
    generation: int
    documents: list
    words: int | None
    diagnostics: list
    log: str
    files: dict[str, OutputFile]


DocumentKeeper = documents.DocumentKeeper


def document_keeper_register(*, keeper: DocumentKeeper) -> None:
    """Collaboration registers itself as the keeper of text documents (see ``workspace.documents``)."""
    documents.keeper_register(keeper)


def text_limit_bytes() -> int:
    """The largest text document, in UTF-8 bytes."""
    return limits.max_text_bytes()


def fence_enter(*, project_id: uuid.UUID) -> None:
    """Take the project mutation fence inside the caller's transaction (raises ProjectNotFound)."""
    services.fence_enter(project_id)


def project_describe(*, project_id: uuid.UUID) -> ProjectSummary | None:
    from workspace.models import Project

    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        return None
    return ProjectSummary(
        project.pk, project.name, project.type, project.entry_path, project.compiler, project.generation
    )


def document_read(*, project_id: uuid.UUID, path: str) -> DocumentText:
    """Workspace's text of a text document (raises FileNotFound / NotATextDocument)."""
    file = selectors.file_at(project_id=project_id, path=path)
    if file.kind != FileKind.TEXT:
        raise NotATextDocument(details={"path": file.path})
    return DocumentText(file.pk, file.path, file.sha256, selectors.text_of(file), file.version)


def document_describe(*, project_id: uuid.UUID, file_id: int) -> DocumentMeta | None:
    """The text document with that id in that project, without its text; ``None`` if there is none."""
    from workspace.models import ProjectFile

    file = ProjectFile.objects.filter(project_id=project_id, pk=file_id, kind=FileKind.TEXT).first()
    if file is None:
        return None
    return DocumentMeta(file.pk, project_id, file.path, file.sha256, file.size_bytes, file.version)


def document_text_read(*, sha256: str) -> str:
    """The text with that digest (every text document's content is stored by digest)."""
    from workspace.models import TextContent

    return TextContent.objects.get(pk=sha256).content


def document_version_require(*, project_id: uuid.UUID, file_id: int, expected_version: int | None) -> None:
    """Raise ``VersionMismatch`` unless the document is at ``expected_version`` (``None``: any)."""
    from workspace.models import ProjectFile

    services.version_require(ProjectFile.objects.filter(project_id=project_id, pk=file_id).first(), expected_version)


def file_meta_for(*, user_id: int | None, project_id: uuid.UUID, path: str) -> FileMeta:
    """Authorize ``view`` and describe the file without reading its bytes.

    Raises ProjectNotFound (not visible), FileNotFound, or InvalidPath.
    """
    selectors.project_for(user_id=user_id, project_id=project_id)
    file = selectors.file_at(project_id=project_id, path=path)
    return FileMeta(project_id, file.path, file.kind, file.size_bytes, file.sha256)


def file_content_read(*, project_id: uuid.UUID, path: str, max_bytes: int) -> tuple[bytes, str]:
    """Read a file's current bytes, refusing more than ``max_bytes``; returns ``(bytes, version_read)``.

    The version is the digest of what was actually read, so a caller that
    admitted an older version can tell the source changed underneath it.
    Raises FileNotFound, or FileTooLarge when the current file exceeds ``max_bytes``.
    """
    file = selectors.file_at(project_id=project_id, path=path)
    if file.size_bytes > max_bytes:
        raise FileTooLarge(details={"limit_bytes": max_bytes, "size_bytes": file.size_bytes})
    return selectors.file_bytes(file), file.sha256


def document_path_of(*, project_id: uuid.UUID, file_id: int) -> str | None:
    from workspace.models import ProjectFile

    return ProjectFile.objects.filter(project_id=project_id, pk=file_id).values_list("path", flat=True).first()


def document_paths_of(*, project_id: uuid.UUID, file_ids) -> dict[int, str]:
    """The paths of those of the files that still exist, by id, in one query."""
    from workspace.models import ProjectFile

    rows = ProjectFile.objects.filter(project_id=project_id, pk__in=list(file_ids)).values_list("pk", "path")
    return dict(rows)


def document_text_store(
    *, project_id: uuid.UUID, path: str, text: str, authors: list[int] | None = None
) -> DocumentText:
    """Replace a text document's content under the fence (joins the caller's transaction); ``authors`` wrote
    the change, for the project's history (``None``: whoever the transaction named already)."""
    prepared = services.text_prepare(path=path_normalize(path), text=text)
    file, _ = services.content_commit(project_id=project_id, prepared=prepared, actors=authors)
    return DocumentText(file.pk, file.path, file.sha256, text, file.version)


def snapshot_freeze(*, project_id: uuid.UUID) -> FrozenSnapshot:
    """The project as of now, pinned, every accepted edit of its text documents in it (a capture's input);
    outermost or inside the caller's transaction. Raises ``ProjectNotFound``."""
    return snapshots.snapshot_freeze_every_edit(project_id=project_id)


def version_require(*, project_id: uuid.UUID, number: int) -> None:
    """Raise ``VersionNotFound`` unless the project's history has that version."""
    from workspace.history.reading import history_brought_up_to_date, version_get

    history_brought_up_to_date(project_id=project_id)
    version_get(project_id=project_id, number=number)


def version_snapshot_freeze(*, project_id: uuid.UUID, number: int) -> FrozenSnapshot:
    """A version of the project (workspace/history) as a pinned snapshot, for a build of it; raises
    ``VersionNotFound``. Its generation is 0: no build of it is ever the project's output."""
    from workspace.history.downloads import version_snapshot_freeze as freeze

    return freeze(project_id=project_id, number=number)


def snapshot_contents(*, snapshot: FrozenSnapshot):
    return snapshots.snapshot_contents(snapshot)


def content_collect() -> dict[str, int]:
    """Fold projects' journals into their histories, reap expired snapshot pins, then delete the content no file,
    no version and no live pin names (workspace/collector.py)."""
    return {
        "histories_folded": folding.histories_fold_pending(),
        "histories_pruned": retention.histories_prune(),
        **collector.content_collect(),
    }


def pin_release(*, pin_id: uuid.UUID) -> None:
    snapshots.pin_release(pin_id=pin_id)


def provision_prepare(
    *, name: str, project_type: str, entry_path: str, files: list[tuple[str, bytes]]
) -> PreparedProject:
    return provisioning.provision_prepare(name=name, project_type=project_type, entry_path=entry_path, files=files)


def provision_commit(*, prepared: PreparedProject, owner_id: int) -> uuid.UUID:
    return provisioning.provision_commit(prepared=prepared, owner_id=owner_id)


# --- names for listings (the task center and the operators' admin) --------------------------------
def project_names_of(*, project_ids) -> dict[uuid.UUID, str]:
    """Names of the projects that still exist, by id, in one query. Callers authorize first."""
    from workspace.models import Project

    ids = {project_id for project_id in project_ids if project_id is not None}
    return dict(Project.objects.filter(pk__in=ids).values_list("pk", "name")) if ids else {}


def project_ids_matching(*, text: str, limit: int = 500) -> list[uuid.UUID]:
    """Ids of projects whose name contains ``text`` (case-insensitive), for operators' searches."""
    from workspace.models import Project

    return list(Project.objects.filter(name__icontains=text).values_list("pk", flat=True)[:limit])


# --- the project's output (docs/architecture.md §7): Processing publishes, every member reads ---------------
def output_content_store(*, data: bytes) -> str:
    """Store an output file's bytes, outside any transaction; returns their digest."""
    return services.output_content_store(data=data)


def output_content_present(*, sha256: str) -> bool:
    return services.output_content_present(sha256=sha256)


def output_publish(*, project_id: uuid.UUID, output: BuildOutput) -> bool:
    """Inside the transaction in which the build succeeds (its job row locked): make ``output`` the project's
    current one, unless the current one is of a newer capture or the project is gone. Returns whether it did."""
    return services.output_publish(project_id=project_id, output=output)


def output_for(*, user_id: int | None, project_id: uuid.UUID) -> ProjectOutput:
    """The project's current output, for a member who may view the project now.

    Raises ProjectNotFound (not visible) or NoOutput (never built successfully)."""
    output = selectors.output_of(user_id=user_id, project_id=project_id)
    files = {
        artifact.role: OutputFile(
            artifact.role, artifact.media_type, artifact.filename, artifact.size_bytes, artifact.sha256
        )
        for artifact in output.artifacts.all()
    }
    return ProjectOutput(
        project_id,
        output.job_id,
        output.operation,
        output.built_by_id,
        output.built_at,
        output.generation,
        output.documents,
        output.words,
        output.diagnostics,
        output.log,
        files,
    )


def output_content_read(*, sha256: str) -> bytes:
    """An output file's bytes, by the digest ``output_for`` named (callers authorize first)."""
    from workspace.storage import asset_storage

    return asset_storage().read(sha256)
