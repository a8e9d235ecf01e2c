"""Creating, configuring and deleting projects."""

import uuid

from django.db import transaction
from django.utils import timezone

from access import facade as access
from workspace.exceptions import InvalidSettings
from workspace.history import folding
from workspace.history.models import FileChange, HistoryCursor
from workspace.models import Compiler, Project, ProjectType
from workspace.paths import is_control, is_invisible, path_normalize
from workspace.services.content import content_commit, fence_enter, project_mutated, text_prepare
from workspace.starters import DEFAULT_ENTRY, STARTERS


def settings_validate(project_type: str, entry_path: str, compiler: str) -> tuple[str, str]:
    entry_path = path_normalize(entry_path)
    expected_suffix = ".tex" if project_type == ProjectType.LATEX else ".typ"
    if not entry_path.endswith(expected_suffix):
        raise InvalidSettings(f"The entry file of a {project_type} project must end in {expected_suffix}.")
    if project_type == ProjectType.TYPST:
        if compiler:
            raise InvalidSettings("Typst projects have no compiler setting.")
        return entry_path, ""
    compiler = compiler or Compiler.PDFLATEX
    if compiler not in Compiler.values:
        raise InvalidSettings(f"Unknown compiler {compiler!r}.", details={"allowed": Compiler.values})
    return entry_path, compiler


def _project_name(name: str) -> str:
    name = name.strip()
    if not name:
        raise InvalidSettings("A project needs a name.")
    # The rule paths follow (workspace/paths.py): a direction override or a zero-width space would let a name
    # show as another one in every list of projects.
    if any(is_control(char) or is_invisible(char) for char in name):
        raise InvalidSettings(
            "A project name must not contain control characters or invisible formatting characters (such as "
            "direction overrides or zero-width spaces).",
            details={"rule": "invisible_character"},
        )
    limit = Project._meta.get_field("name").max_length
    if len(name) > limit:
        raise InvalidSettings(f"A project name has at most {limit} characters.", details={"limit": limit})
    return name


def project_create(
    *,
    actor_id: int,
    name: str,
    project_type: str,
    entry_path: str | None = None,
    compiler: str | None = None,
    starter: bool = False,
) -> Project:
    """Create a project owned by ``actor_id``, optionally with starter content that compiles."""
    if project_type not in ProjectType.values:
        raise InvalidSettings(f"Unknown project type {project_type!r}.", details={"allowed": ProjectType.values})
    name = _project_name(name)
    entry_path, compiler = settings_validate(project_type, entry_path or DEFAULT_ENTRY[project_type], compiler or "")
    starter_files = (
        [text_prepare(path=path, text=text) for path, text in STARTERS[project_type].items()] if starter else []
    )
    with transaction.atomic(durable=True):
        project = Project.objects.create(
            name=name,
            type=project_type,
            entry_path=entry_path,
            compiler=compiler,
            created_by_id=actor_id,
            content_changed_at=timezone.now(),
        )
        access.grant_owner(project_id=project.pk, user_id=actor_id)
        for prepared in starter_files:
            content_commit(project_id=project.pk, prepared=prepared, actors=[actor_id])
        folding.version_close(project_id=project.pk)  # the project as made is a version of its own
        project.refresh_from_db()
        return project


def project_update(
    *,
    actor_id: int,
    project_id: uuid.UUID,
    name: str | None = None,
    entry_path: str | None = None,
    compiler: str | None = None,
) -> Project:
    """Change a project's name or build settings; settings changes bump the generation."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        new_entry, new_compiler = settings_validate(
            project.type,
            entry_path if entry_path is not None else project.entry_path,
            compiler if compiler is not None else project.compiler,
        )
        fields = []
        if name is not None:
            project.name = _project_name(name)
            fields.append("name")
        if (new_entry, new_compiler) != (project.entry_path, project.compiler):
            project.entry_path, project.compiler = new_entry, new_compiler
            fields += ["entry_path", "compiler"]
            project_mutated(project, timezone.now())
        if fields:
            project.save(update_fields=fields)
        return project


def project_delete(*, actor_id: int, project_id: uuid.UUID) -> None:
    """Delete a project, its files and grants. Content bytes stay (content is shared by digest)."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.DELETE)
    with transaction.atomic(durable=True):
        project = fence_enter(project_id, actors=[actor_id])
        HistoryCursor.objects.select_for_update().filter(project_id=project_id).first()  # no fold adds a version
        access.grants_delete_for_project(project_id=project.pk)
        project.delete()
        FileChange.objects.filter(project_id=project_id).delete()  # the deleted files' journal, written just now
