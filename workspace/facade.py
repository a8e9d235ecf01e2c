"""What other contexts may ask Workspace. Keyword-only, ids in, frozen values out."""

import uuid
from dataclasses import dataclass

from workspace import provisioning, selectors, services, snapshots
from workspace.exceptions import FileNotFound, InvalidBundle, NotATextDocument, WorkspaceError
from workspace.models import FileKind
from workspace.paths import path_normalize
from workspace.provisioning import PreparedProject
from workspace.snapshots import FrozenFile, FrozenSnapshot, PinnedContentMissing

__all__ = [
    "DocumentText",
    "FileNotFound",
    "FrozenFile",
    "FrozenSnapshot",
    "InvalidBundle",
    "NotATextDocument",
    "PinnedContentMissing",
    "PreparedProject",
    "ProjectSummary",
    "WorkspaceError",
    "document_path_of",
    "document_read",
    "document_text_store",
    "fence_enter",
    "pin_release",
    "project_describe",
    "provision_commit",
    "provision_prepare",
    "snapshot_contents",
    "snapshot_freeze",
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
class DocumentText:
    file_id: int
    path: str
    sha256: str
    text: str


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
    """The current text of a text document (raises FileNotFound / NotATextDocument)."""
    file = selectors.file_at(project_id=project_id, path=path)
    if file.kind != FileKind.TEXT:
        raise NotATextDocument(details={"path": file.path})
    return DocumentText(file.pk, file.path, file.sha256, selectors.text_of(file))


def document_path_of(*, project_id: uuid.UUID, file_id: int) -> str | None:
    from workspace.models import ProjectFile

    return (
        ProjectFile.objects.filter(project_id=project_id, pk=file_id).values_list("path", flat=True).first()
    )


def document_text_store(*, project_id: uuid.UUID, path: str, text: str) -> DocumentText:
    """Replace a text document's content under the fence (joins the caller's transaction)."""
    prepared = services.text_prepare(path=path_normalize(path), text=text)
    file, _ = services.content_commit(project_id=project_id, prepared=prepared)
    return DocumentText(file.pk, file.path, file.sha256, text)


def snapshot_freeze(*, project_id: uuid.UUID) -> FrozenSnapshot:
    return snapshots.snapshot_freeze(project_id=project_id)


def snapshot_contents(*, snapshot: FrozenSnapshot):
    return snapshots.snapshot_contents(snapshot)


def pin_release(*, pin_id: uuid.UUID) -> None:
    snapshots.pin_release(pin_id=pin_id)


def provision_prepare(
    *, name: str, project_type: str, entry_path: str, files: list[tuple[str, bytes]]
) -> PreparedProject:
    return provisioning.provision_prepare(
        name=name, project_type=project_type, entry_path=entry_path, files=files
    )


def provision_commit(*, prepared: PreparedProject, owner_id: int) -> uuid.UUID:
    return provisioning.provision_commit(prepared=prepared, owner_id=owner_id)
