"""The library's pages: the project's Library tab (upload, replace, versions, indexing state, search)."""

import uuid
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from access import facade as access
from foundation.errors import NotFound
from foundation.http.body_limits import body_limit
from foundation.http.ui import form_action
from library import selectors
from library.exceptions import PdfTooLarge, RevisionMismatch, SearchQueryInvalid
from library.services.acceptance import Accepted, VersionUpload, library_version_accept
from library.services.pdf_checks import max_pdf_bytes
from processing.facade import InvalidOptions
from workspace import facade as workspace


def _library_url(request, project_id: uuid.UUID, **query) -> str:
    return f"{reverse('workspace:project-detail', args=[project_id])}?{urlencode({'tab': 'library', **query})}"


def _search(request, project_id: uuid.UUID) -> tuple[str, list, str]:
    query = (request.GET.get("q") or "").strip()
    if not query:
        return "", [], ""
    try:
        hits = selectors.library_search_for(user_id=request.user.pk, project_id=project_id, query=query)
    except SearchQueryInvalid as exc:
        return query[:500], [], exc.message
    return query, hits, ""


@dataclass(frozen=True)
class _DocumentPanel:
    document: object
    rows: list[tuple]  # (version, status, job state)
    replace_key: str
    in_conflict: bool

    @property
    def indexing(self) -> bool:
        """A version is still being indexed: the panel polls until it is searchable (or failed)."""
        return any(status == "indexing" for _, status, _ in self.rows)


def _panel(view, conflict: str) -> _DocumentPanel:
    rows = [
        (version, view.version_status(version), view.job_states.get(version.index_job_id, ""))
        for version in view.document.versions
    ]
    return _DocumentPanel(view.document, rows, uuid.uuid4().hex, str(view.document.id) == conflict)


def library_tab(request, project_id: uuid.UUID) -> str:
    """The Library tab's HTML; every form gets its own fresh Idempotency-Key."""
    views = selectors.library_documents_for(user_id=request.user.pk, project_id=project_id)
    query, hits, search_error = _search(request, project_id)
    conflict = request.GET.get("conflict", "")
    context = {
        "project_id": project_id,
        "documents": [_panel(view, conflict) for view in views],
        "upload_key": uuid.uuid4().hex,
        "can_edit": access.permission_check(user_id=request.user.pk, project_id=project_id, permission="edit"),
        "query": query,
        "hits": hits,
        "search_error": search_error,
        "stale_revision": request.GET.get("from", ""),
        "max_pdf_bytes": max_pdf_bytes(),
    }
    return render_to_string("library/library_tab.html", context, request=request)


@login_required
@require_GET
def library_document_panel(request, project_id: uuid.UUID, document_id: uuid.UUID) -> HttpResponse:
    """One document's panel, as an indexing version's panel polls it; it stops polling once none is left."""
    try:
        view = selectors.library_document_for(user_id=request.user.pk, project_id=project_id, document_id=document_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    context = {
        "project_id": project_id,
        "panel": _panel(view, ""),
        "can_edit": access.permission_check(user_id=request.user.pk, project_id=project_id, permission="edit"),
    }
    response = render(request, "library/library_tab.html#document", context)
    return response if context["panel"].indexing else HttpResponseStopPolling(response.content)


def library_tab_register() -> None:
    workspace.project_tab_register(name="library", label="Library", render=library_tab)


def _uploaded_pdf(request) -> tuple[bytes, str]:
    upload = request.FILES.get("pdf")
    if upload is None:
        raise InvalidOptions("Choose a PDF to upload.")
    if upload.size > max_pdf_bytes():
        raise PdfTooLarge(details={"limit_bytes": max_pdf_bytes(), "size_bytes": upload.size})
    return upload.read(), upload.name or ""


def _announce(request, accepted: Accepted) -> None:
    if accepted.replayed:
        messages.info(request, "That upload had already been accepted; nothing new was added.")
    else:
        messages.success(request, "PDF accepted. Indexing runs in the background; search follows when it is done.")


@body_limit(max_pdf_bytes, too_large=PdfTooLarge, form=True)
@login_required
@require_POST
@form_action(_library_url)
def library_upload(request, project_id: uuid.UUID):
    data, filename = _uploaded_pdf(request)
    upload = VersionUpload(project_id, None, None, data, filename, request.POST.get("title") or None)
    accepted = library_version_accept(
        actor_id=request.user.pk, idempotency_key=request.POST.get("idempotency_key"), upload=upload
    )
    _announce(request, accepted)
    return redirect(_library_url(request, project_id))


@body_limit(max_pdf_bytes, too_large=PdfTooLarge, form=True)
@login_required
@require_POST
@form_action(_library_url)
def library_replace(request, project_id: uuid.UUID, document_id: uuid.UUID):
    data, filename = _uploaded_pdf(request)
    try:
        revision = int(request.POST.get("revision", ""))
    except ValueError as exc:
        raise InvalidOptions("The form lost the revision it was made from; reload the page.") from exc
    upload = VersionUpload(project_id, document_id, revision, data, filename, None)
    try:
        accepted = library_version_accept(
            actor_id=request.user.pk, idempotency_key=request.POST.get("idempotency_key"), upload=upload
        )
    except RevisionMismatch as exc:
        current = exc.details.get("current_revision")
        messages.error(
            request,
            f"Not replaced: this document changed since your form was made (revision {revision}); it is now at "
            f"revision {current}. Look at its versions below and replace it again if you still want to.",
        )
        return redirect(_library_url(request, project_id, conflict=document_id, **{"from": revision}))
    _announce(request, accepted)
    return redirect(_library_url(request, project_id))


__all__ = ["library_document_panel", "library_replace", "library_tab", "library_tab_register", "library_upload"]
