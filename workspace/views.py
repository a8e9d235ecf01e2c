import uuid
from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from access import facade as access
from config.errors import NotFound, QuireError
from config.http.body_limits import body_limit
from config.http.ui import back_to, form_action
from workspace import limits, selectors, services, tabs
from workspace.downloads import file_response
from workspace.exceptions import InvalidSettings
from workspace.models import Compiler, FileKind, ProjectType
from workspace.paths import path_ancestors


@dataclass(frozen=True)
class TreeRow:
    depth: int
    name: str
    path: str
    is_folder: bool
    kind: str = ""


def tree_rows(paths_and_kinds: list[tuple[str, str]]) -> list[TreeRow]:
    """Flatten sorted file paths into rows with a folder row before each folder's first file."""
    rows: list[TreeRow] = []
    seen_folders: set[str] = set()
    for path, kind in sorted(paths_and_kinds, key=lambda item: item[0].split("/")):
        for depth, folder in enumerate(path_ancestors(path)):
            if folder not in seen_folders:
                seen_folders.add(folder)
                rows.append(TreeRow(depth, folder.rsplit("/", 1)[-1], folder, True))
        rows.append(TreeRow(path.count("/"), path.rsplit("/", 1)[-1], path, False, kind))
    return rows


def _project_url(request, project_id: uuid.UUID, **_) -> str:
    return reverse("workspace:project-detail", args=[project_id])


def _file_url(project_id: uuid.UUID, path: str) -> str:
    return f"{reverse('workspace:project-detail', args=[project_id])}?{urlencode({'file': path})}"


def _project_or_404(request, project_id: uuid.UUID, permission: str = access.Permission.VIEW):
    try:
        return selectors.project_for(user_id=request.user.pk, project_id=project_id, permission=permission)
    except NotFound as exc:
        raise Http404(exc.message) from exc


@login_required
def project_list(request):
    projects = selectors.projects_visible_to(user_id=request.user.pk)
    return render(request, "workspace/project_list.html", {"projects": projects})


@login_required
def project_new(request):
    if request.method == "POST":
        try:
            project = services.project_create(
                actor_id=request.user.pk,
                name=request.POST.get("name", ""),
                project_type=request.POST.get("type", ""),
                compiler=(request.POST.get("compiler") or None) if request.POST.get("type") == "latex" else None,
                starter=True,
            )
        except QuireError as exc:
            messages.error(request, exc.message)
        else:
            return redirect("workspace:project-detail", project_id=project.pk)
    return render(request, "workspace/project_new.html", {"types": ProjectType.choices, "compilers": Compiler.choices})


@login_required
def project_detail(request, project_id: uuid.UUID):
    project = _project_or_404(request, project_id)
    files = selectors.files_of(project_id=project.pk)
    selected_path = request.GET.get("file") or project.entry_path
    selected = next((file for file in files if file.path == selected_path), None)
    if selected is not None and selected.kind == FileKind.TEXT:
        selected = selectors.file_current(project_id=project.pk, path=selected.path)
    role = access.role_of(user_id=request.user.pk, project_id=project.pk)
    context = {
        "project": project,
        "files": files,
        "tree": tree_rows([(file.path, file.kind) for file in files]),
        "selected": selected,
        "selected_text": selectors.text_of(selected) if selected and selected.kind == FileKind.TEXT else None,
        "role": role,
        "can_edit": access.permission_check(user_id=request.user.pk, project_id=project.pk, permission="edit"),
        "can_manage": access.permission_check(
            user_id=request.user.pk, project_id=project.pk, permission="manage_members"
        ),
        "members": access.members_of(project_id=project.pk),
        "roles": access.Role.choices,
        "compilers": Compiler.choices,
        "tab": request.GET.get("tab", "files"),
        "extra_tabs": tabs.project_tabs(),
    }
    contributed = tabs.project_tab(context["tab"])
    if contributed is not None:
        context["tab_html"] = contributed.render(request, project.pk)
    return render(request, "workspace/project_detail.html", context)


@body_limit(limits.max_project_bytes, form=True)
@login_required
@require_POST
@form_action(_project_url)
def file_upload(request, project_id: uuid.UUID):
    folder = (request.POST.get("folder") or "").strip().strip("/")
    uploads = request.FILES.getlist("files")
    if not uploads:
        raise InvalidSettings("Choose at least one file to upload.")
    last_path = None
    for upload in uploads:
        path = f"{folder}/{upload.name}" if folder else upload.name
        file, _ = services.file_write(actor_id=request.user.pk, project_id=project_id, path=path, data=upload.read())
        last_path = file.path
    messages.success(request, f"Uploaded {len(uploads)} file{'s' if len(uploads) != 1 else ''}.")
    return redirect(_file_url(project_id, last_path))


@login_required
@require_POST
@form_action(_project_url)
def file_new(request, project_id: uuid.UUID):
    file, _ = services.file_write(
        actor_id=request.user.pk,
        project_id=project_id,
        path=request.POST.get("path", ""),
        data=b"",
        kind=FileKind.TEXT,
    )
    return redirect(_file_url(project_id, file.path))


@login_required
@require_POST
@form_action(_project_url)
def file_rename(request, project_id: uuid.UUID):
    file = services.file_move(
        actor_id=request.user.pk,
        project_id=project_id,
        path=request.POST.get("path", ""),
        new_path=request.POST.get("new_path", ""),
    )
    messages.success(request, f"Renamed to {file.path}.")
    return redirect(_file_url(project_id, file.path))


@login_required
@require_POST
@form_action(_project_url)
def file_delete(request, project_id: uuid.UUID):
    path = request.POST.get("path", "")
    services.file_delete(actor_id=request.user.pk, project_id=project_id, path=path)
    messages.success(request, f"Deleted {path}.")
    return redirect(_project_url(request, project_id))


@login_required
def file_download(request, project_id: uuid.UUID, path: str):
    _project_or_404(request, project_id)
    try:
        file = selectors.file_current(project_id=project_id, path=path)
    except QuireError as exc:
        raise Http404(exc.message) from exc
    return file_response(file, attachment=True)


@login_required
@require_POST
@form_action(_project_url)
def project_settings(request, project_id: uuid.UUID):
    services.project_update(
        actor_id=request.user.pk,
        project_id=project_id,
        name=request.POST.get("name"),
        entry_path=request.POST.get("entry_path"),
        compiler=request.POST.get("compiler"),
    )
    messages.success(request, "Settings saved.")
    return redirect(back_to(request, _project_url(request, project_id)))


@login_required
@require_POST
@form_action(_project_url)
def project_delete(request, project_id: uuid.UUID):
    services.project_delete(actor_id=request.user.pk, project_id=project_id)
    messages.success(request, "Project deleted.")
    return redirect("workspace:project-list")
