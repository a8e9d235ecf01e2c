import uuid

from access import facade as access
from workspace import documents
from workspace.exceptions import FileNotFound, NoOutput
from workspace.models import FileKind, Project, ProjectFile, ProjectFolder, ProjectOutput, TextContent
from workspace.paths import path_normalize
from workspace.storage import asset_storage


def projects_visible_to(*, user_id: int) -> list[Project]:
    ids = access.project_ids_visible_to(user_id=user_id)
    return list(Project.objects.filter(pk__in=ids).order_by("-created_at", "pk"))


def project_for(*, user_id: int | None, project_id: uuid.UUID, permission: str = access.Permission.VIEW) -> Project:
    """The project, if the principal holds ``permission``; 404 when not visible, 403 when not allowed."""
    access.permission_require(user_id=user_id, project_id=project_id, permission=permission)
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        raise access.ProjectNotFound()
    return project


def files_of(*, project_id: uuid.UUID) -> list[ProjectFile]:
    return list(ProjectFile.objects.filter(project_id=project_id).order_by("path"))


def folders_of(*, project_id: uuid.UUID) -> list[str]:
    return list(ProjectFolder.objects.filter(project_id=project_id).order_by("path").values_list("path", flat=True))


def file_at(*, project_id: uuid.UUID, path: str) -> ProjectFile:
    path = path_normalize(path)
    file = ProjectFile.objects.filter(project_id=project_id, path=path).first()
    if file is None:
        raise FileNotFound(details={"path": path})
    return file


def file_current(*, project_id: uuid.UUID, path: str) -> ProjectFile:
    """The file as of now: a text document's row first takes in every edit accepted live."""
    file = file_at(project_id=project_id, path=path)
    if file.kind == FileKind.TEXT and documents.keeper() is not None:
        documents.projection_bring_up_to_date(project_id=project_id, file_id=file.pk)
        file = file_at(project_id=project_id, path=path)
    return file


def file_bytes(file: ProjectFile) -> bytes:
    if file.kind == FileKind.TEXT:
        return TextContent.objects.get(pk=file.sha256).content.encode("utf-8")
    return asset_storage().read(file.sha256)


def text_of(file: ProjectFile) -> str:
    return TextContent.objects.get(pk=file.sha256).content


def output_of(*, user_id: int | None, project_id: uuid.UUID) -> ProjectOutput:
    """The project's current output with its files, for a member who may view the project (checked now).

    Raises ProjectNotFound (not visible) or NoOutput (never built successfully)."""
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    output = ProjectOutput.objects.filter(project_id=project_id).prefetch_related("artifacts").first()
    if output is None:
        raise NoOutput()
    return output
