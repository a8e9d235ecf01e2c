import uuid
from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from access import facade as access
from foundation.errors import NotFound, QuireError
from foundation.http.body_limits import body_limit
from foundation.http.errors import error_body
from foundation.http.ui import back_to, form_action
from workspace import limits, selectors, services, tabs
from workspace.archives import max_archive_bytes
from workspace.downloads import file_response
from workspace.encodings import legacy_encoded
from workspace.exceptions import InvalidSettings
from workspace.models import Compiler, FileKind, ProjectType
from workspace.paths import path_ancestors


@dataclass(frozen=True)
class TreeRow:
    depth: int
    name: str
    path: str
    is_folder: bool
    kind: str = "folder"
    file_id: int | None = None
    encoding: str = ""
    files: int = 0  # for a folder: how many files are in it, at any depth (deleting it says so)

    @property
    def indent(self) -> int:
        """Steps of indentation, 1 at the top: the stylesheet has a rule for each up to ``MAX_INDENT``."""
        return min(self.depth + 1, MAX_INDENT)


# A style attribute would break the Content-Security-Policy (style-src 'self'), so rows name their indentation
# in data-depth and quire.css has a rule per step; deeper rows indent as far as the last.
MAX_INDENT = 16


def tree_rows(files: list, folders: list[str]) -> list[TreeRow]:
    """The tree as rows, each folder before what is in it (``files``: ProjectFile rows)."""
    inside = {folder: 0 for folder in folders}
    for file in files:
        for folder in path_ancestors(file.path):
            inside[folder] = inside.get(folder, 0) + 1
    rows = [
        TreeRow(path.count("/"), path.rsplit("/", 1)[-1], path, True, files=count) for path, count in inside.items()
    ]
    rows += [
        TreeRow(file.path.count("/"), file.path.rsplit("/", 1)[-1], file.path, False, file.kind, file.pk, file.encoding)
        for file in files
    ]
    return sorted(rows, key=lambda row: row.path.split("/"))


def _tree_context(request, project) -> dict:
    files = selectors.files_of(project_id=project.pk)
    return {
        "project": project,
        "files": files,
        "tree": tree_rows(files, selectors.folders_of(project_id=project.pk)),
        "can_edit": access.permission_check(user_id=request.user.pk, project_id=project.pk, permission="edit"),
    }


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
    context = _tree_context(request, project)
    files = context["files"]
    selected_path = request.GET.get("file") or project.entry_path
    selected = next((file for file in files if file.path == selected_path), None)
    if selected is not None and selected.kind == FileKind.TEXT:
        selected = selectors.file_current(project_id=project.pk, path=selected.path)
    role = access.role_of(user_id=request.user.pk, project_id=project.pk)
    context.update(
        {
            "selected": selected,
            "selected_id": selected.pk if selected else None,
            "selected_text": _readable_text(selected),
            "role": role,
            "user_colour": access.user_colour(user_id=request.user.pk),
            "can_manage": access.permission_check(
                user_id=request.user.pk, project_id=project.pk, permission="manage_members"
            ),
            "members": access.members_of(project_id=project.pk),
            "roles": access.Role.choices,
            "compilers": Compiler.choices,
            "tab": request.GET.get("tab", "files"),
            "extra_tabs": tabs.project_tabs(),
        }
    )
    contributed = tabs.project_tab(context["tab"])
    if contributed is not None:
        context["tab_html"] = contributed.render(request, project.pk)
    return render(request, "workspace/project_detail.html", context)


def _readable_text(file) -> str | None:
    """A text document's text, or a legacy-encoded file's decoded (it is shown read-only); None otherwise."""
    if file is None:
        return None
    if file.kind == FileKind.TEXT:
        return selectors.text_of(file)
    if file.encoding and file.size_bytes <= limits.max_text_bytes() * 4:
        return selectors.file_bytes(file).decode(file.encoding, errors="replace")
    return None


@login_required
def project_tree(request, project_id: uuid.UUID):
    """The tree alone, for the page to show again when the project's events say it changed."""
    project = _project_or_404(request, project_id)
    context = _tree_context(request, project)
    selected = request.GET.get("selected", "")
    context["selected_id"] = int(selected) if selected.isdigit() else None
    return render(request, "workspace/tree.html#tree", context)


@body_limit(limits.max_project_bytes, form=True)
@login_required
@require_POST
def file_upload(request, project_id: uuid.UUID):
    """Files picked or dropped on the tree, into a folder, in one change (a ``.zip`` among them is unpacked
    there). A script asks for JSON (``Accept: application/json``) and gets the API's error shape, 409
    ``archive_conflicts`` included, which it may answer by sending ``overwrite=1``; a plain form is redirected."""
    wants_json = "application/json" in request.headers.get("Accept", "")
    try:
        written = _uploads_written(request, project_id)
    except NotFound as exc:
        if wants_json:
            return JsonResponse(error_body(exc.code, exc.message, exc.details), status=404)
        raise Http404(exc.message) from exc
    except QuireError as exc:
        if wants_json:
            return JsonResponse(error_body(exc.code, exc.message, exc.details), status=exc.status_code)
        messages.error(request, exc.message)
        return redirect(_project_url(request, project_id))
    if wants_json:
        return JsonResponse({"written": [file.path for file in written], "legacy_encoded": legacy_encoded(written)})
    messages.success(request, f"Uploaded {len(written)} file{'s' if len(written) != 1 else ''}.")
    return redirect(_file_url(project_id, written[-1].path) if written else _project_url(request, project_id))


def _uploads_written(request, project_id: uuid.UUID) -> list:
    folder = (request.POST.get("folder") or "").strip().strip("/")
    overwrite = request.POST.get("overwrite") in ("1", "true")
    uploads = request.FILES.getlist("files")
    if not uploads:
        raise InvalidSettings("Choose at least one file to upload.")
    archives = [upload for upload in uploads if upload.name.lower().endswith(".zip")]
    plain = [
        (f"{folder}/{upload.name}" if folder else upload.name, upload.read())
        for upload in uploads
        if upload not in archives
    ]
    written = []
    if plain:
        batch = services.files_write_batch(
            actor_id=request.user.pk, project_id=project_id, files=plain, overwrite=overwrite
        )
        written += batch.files
    for archive in archives:
        unpacked = services.archive_unpack(
            actor_id=request.user.pk, project_id=project_id, data=archive.read(), into=folder, overwrite=overwrite
        )
        written += unpacked.written.files
    return written


@login_required
@require_POST
@form_action(_project_url)
def folder_new(request, project_id: uuid.UUID):
    made = services.folder_create(actor_id=request.user.pk, project_id=project_id, path=request.POST.get("path", ""))
    messages.success(request, f"Made the folder {made.path}/.")
    return redirect(_project_url(request, project_id))


@login_required
@require_POST
@form_action(_project_url)
def file_convert(request, project_id: uuid.UUID):
    """Convert a text file kept in another encoding to UTF-8 (a live text document from then on)."""
    file = services.file_convert_to_utf8(
        actor_id=request.user.pk, project_id=project_id, path=request.POST.get("path", "")
    )
    messages.success(request, f"Converted {file.path} to UTF-8.")
    return redirect(_file_url(project_id, file.path))


@body_limit(lambda: max_archive_bytes(), form=True)
@login_required
@require_POST
@form_action(lambda request, **_: reverse("workspace:project-new"))
def project_from_zip(request):
    """New project → Upload a project (.zip)."""
    upload = request.FILES.get("archive")
    if upload is None:
        raise InvalidSettings("Choose a .zip file to upload.")
    name = request.POST.get("name", "").strip() or upload.name.rsplit(".", 1)[0]
    project_id, _ = services.project_from_archive(actor_id=request.user.pk, name=name, data=upload.read())
    messages.success(request, "Your project is ready.")
    return redirect("workspace:project-detail", project_id=project_id)


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
