"""HTML for authors: the task center (badge, drawer, ``/tasks``) and the contextual submission controls.

Every view parses its input, makes one service or selector call and renders a
partial of ``processing/task_center.html`` or ``processing/actions.html``.
Polling is decided here, per response: a row polls fast only while its job is
active, the badge polls slowly only while something is active, and a poll that
finds its job finished answers ``286`` (HttpResponseStopPolling).
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling, trigger_client_event
from django_htmx.middleware import HtmxDetails

from foundation.errors import NotFound, QuireError
from foundation.http.body_limits import body_limit
from foundation.http.ui import back_to, not_found_is_404
from foundation.text_rules import unstorable_dropped
from processing.kernel.configuration import limits
from processing.operations.builds import build_operation_for
from processing.queue.cancellation import job_cancel
from processing.submission.manual_retry import job_retry
from processing.submission.submit import Upload, job_submit
from processing.ui import controls, task_center

FAST_POLL = "2s"  # a row whose job is still active, on screen in the drawer or on /tasks
SLOW_POLL = "15s"  # the header badge alone, while any job is active
SUBMITTED = "quire:job-submitted"  # a job was created from this page: the list reloads, the drawer opens
CHANGED = "quire:jobs-changed"  # a shown job finished: the badge recounts
QUEUED = "Queued. Follow it in the task center."


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


@dataclass(frozen=True)
class Notice:
    kind: str  # ok | waiting | error
    text: str
    job_id: uuid.UUID | None = None


def _seen_at(raw: str) -> datetime | None:
    """The browser's last look at the task center (a server timestamp it was given), or None."""
    if raw == "now":
        return timezone.now()
    try:
        seen = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return seen if seen.tzinfo else None


# --- the task center ----------------------------------------------------------------------------
@login_required
@require_GET
def tasks_page(request: HtmxHttpRequest) -> HttpResponse:
    """``/tasks``: the task center as a full page (what small screens open)."""
    tasks = task_center.task_list_for(user_id=request.user.pk)
    return render(request, "processing/tasks_page.html", {"tasks": tasks, "fast_poll": FAST_POLL})


@login_required
@require_GET
def task_list(request: HtmxHttpRequest) -> HttpResponse:
    tasks = task_center.task_list_for(user_id=request.user.pk)
    return render(request, "processing/task_center.html#task-list", {"tasks": tasks, "fast_poll": FAST_POLL})


@login_required
@require_GET
def task_badge(request: HtmxHttpRequest) -> HttpResponse:
    counts = task_center.task_counts_for(user_id=request.user.pk, seen_at=_seen_at(request.GET.get("seen", "")))
    context = {"counts": counts, "badge_poll": SLOW_POLL if counts.active else ""}
    return render(request, "processing/task_center.html#badge", context)


def _row_response(
    request: HtmxHttpRequest, row: task_center.TaskRow, notice: Notice | None = None, *, polled: bool = False
) -> HttpResponse:
    """The row; once its job has finished, the badge is told to recount and a poll is told to stop."""
    context = {"row": row, "fast_poll": FAST_POLL, "now": timezone.now(), "notice": notice}
    response = render(request, "processing/task_center.html#task-row", context)
    if row.active:
        return response
    if polled:
        response = HttpResponseStopPolling(response.content)
    return trigger_client_event(response, CHANGED)


@login_required
@require_GET
@not_found_is_404
def task_row(request: HtmxHttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """One job's row: what an active row polls.

    htmx swaps nothing on an error status, so a polled row whose job the user
    may no longer see (a revoked grant, a deleted project) is replaced by a
    closing row with 286 instead of a 404 it would poll for ever.
    """
    try:
        row = task_center.task_row_for(user_id=request.user.pk, job_id=job_id)
    except NotFound:
        if not (request.htmx and request.htmx.trigger == f"job-{job_id}"):  # only the row's own poll
            raise
        gone = format_html('<li class="job job-gone" id="job-{}">This task is no longer available to you.</li>', job_id)
        return trigger_client_event(HttpResponseStopPolling(gone), CHANGED)
    return _row_response(request, row, polled=bool(request.htmx))


@login_required
@require_POST
@not_found_is_404
def task_cancel(request: HtmxHttpRequest, job_id: uuid.UUID) -> HttpResponse:
    job_cancel(actor_id=request.user.pk, job_id=job_id)
    return _row_response(request, task_center.task_row_for(user_id=request.user.pk, job_id=job_id))


@login_required
@require_POST
@not_found_is_404
def task_retry(request: HtmxHttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """Retry a failed job as a new linked job; the list reloads to show it."""
    try:
        retried = job_retry(actor_id=request.user.pk, job_id=job_id)
    except NotFound:
        raise
    except QuireError as exc:
        notice = Notice("error", exc.message)
    else:
        notice = Notice("ok", "Retried as a new job.", retried.job_id)
    response = _row_response(request, task_center.task_row_for(user_id=request.user.pk, job_id=job_id), notice)
    return trigger_client_event(response, SUBMITTED) if notice.kind == "ok" else response


@login_required
@require_POST
@not_found_is_404
def task_rebuild(request: HtmxHttpRequest, job_id: uuid.UUID) -> HttpResponse:
    """Build a failed build's project again from its current content (the fix the author just made)."""
    row = task_center.task_row_for(user_id=request.user.pk, job_id=job_id)
    if not row.rebuildable:
        notice = Notice("error", "Only a build its content made fail is rebuilt; use Retry for this one.")
    else:
        notice = _submit(request, operation_name=row.operation, project_id=row.project_id)
        if notice.kind != "error":
            notice = Notice(notice.kind, "Rebuilding from the current text.", notice.job_id)
    response = _row_response(request, row, notice)
    return trigger_client_event(response, SUBMITTED) if notice.job_id else response


@login_required
@require_GET
@not_found_is_404
def task_diagnostics(request: HtmxHttpRequest, job_id: uuid.UUID) -> HttpResponse:
    diagnostics = task_center.diagnostics_for(user_id=request.user.pk, job_id=job_id)
    return render(request, "processing/task_center.html#diagnostics", {"diagnostics": diagnostics})


# --- contextual submission ----------------------------------------------------------------------
@login_required
@require_GET
@not_found_is_404
def project_actions(request: HtmxHttpRequest, project_id: uuid.UUID) -> HttpResponse:
    """Build PDF (with its controls) and the export menu, for the project page to load."""
    project_controls = controls.project_controls_for(user_id=request.user.pk, project_id=project_id)
    return render(request, "processing/actions.html#project-actions", {"controls": project_controls})


@login_required
@require_GET
def import_section(request: HtmxHttpRequest) -> HttpResponse:
    """The PPTX import form for the new-project page; empty when this deployment does not offer it."""
    return render(request, "processing/actions.html#import-section", {"control": controls.import_control_for()})


def _submit(request: HtmxHttpRequest, *, quiet: bool = False, **command) -> Notice:
    """Submit through ``job_submit``; anticipated refusals (such as a full queue) become the notice.

    ``quiet``: a plainly queued job gets an empty notice (something else on the page shows its progress).
    """
    try:
        submitted = job_submit(actor_id=request.user.pk, idempotency_key=request.POST.get("idempotency_key"), **command)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except QuireError as exc:
        return Notice("error", exc.message)
    notice = _submitted_notice(submitted.replayed, request.POST.get("waiting") == "1", submitted.job_id)
    return Notice(notice.kind, "", notice.job_id) if quiet and notice.text == QUEUED else notice


def _answer(
    request: HtmxHttpRequest, notice: Notice, *, key_id: str, fallback: str, follow_job: bool = False
) -> HttpResponse:
    """The notice and a fresh key for the form (htmx), or a message and a redirect (a plain form post).

    ``follow_job``: the notice also shows the job's own row, which follows it to its end (an import: the page
    then offers to open the new project)."""
    if not request.htmx:
        (messages.error if notice.kind == "error" else messages.success)(request, notice.text)
        return redirect(back_to(request, fallback))
    context = {"notice": notice, "key_id": key_id, "follow_job": follow_job}
    response = render(request, "processing/actions.html#notice", context)
    return trigger_client_event(response, SUBMITTED, {"job_id": str(notice.job_id)}) if notice.job_id else response


def _submitted_notice(replayed: bool, waiting: bool, job_id: uuid.UUID) -> Notice:
    if replayed:
        return Notice("ok", "Already submitted — this is the same job.", job_id)
    if waiting:
        return Notice("waiting", "Queued. Workers are offline, so the job will wait until one is back.", job_id)
    return Notice("ok", QUEUED, job_id)


@login_required
@require_POST
def build_submit(request: HtmxHttpRequest, project_id: uuid.UUID) -> HttpResponse:
    compiler = request.POST.get("compiler") or None
    options = {"compiler": compiler} if compiler else {}
    # "Recompile from scratch" and "build when I stop typing" (frontend/src/build/main.js).
    options |= {flag: True for flag in ("clean", "supersede") if request.POST.get(flag) == "1"}
    try:
        operation = build_operation_for(project_id=project_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    # The build status beside the button follows a queued build; the notice speaks only of anything else.
    notice = _submit(
        request, quiet=bool(request.htmx), operation_name=operation, project_id=project_id, options=options
    )
    return _answer(request, notice, key_id="build-key", fallback=_project_url(project_id))


@login_required
@require_POST
def export_pptx_submit(request: HtmxHttpRequest, project_id: uuid.UUID) -> HttpResponse:
    notice = _submit(request, operation_name=controls.EXPORT_PPTX, project_id=project_id)
    return _answer(request, notice, key_id="export-pptx-key", fallback=_project_url(project_id))


@body_limit(lambda: limits().input_bytes, form=True)
@login_required
@require_POST
def import_pptx_submit(request: HtmxHttpRequest) -> HttpResponse:
    upload = request.FILES.get("file")
    if upload is None:
        notice = Notice("error", "Choose a .pptx file to import.")
    else:
        profile = request.POST.get("input_profile") or None
        notice = _submit(
            request,
            operation_name=controls.IMPORT_PPTX,
            options={"input_profile": profile} if profile else None,
            upload=Upload(data=upload.read(limits().input_bytes + 1), filename=unstorable_dropped(upload.name)[:255]),
        )
    return _answer(request, notice, key_id="import-key", fallback=reverse("workspace:project-new"), follow_job=True)


def _project_url(project_id: uuid.UUID) -> str:
    return reverse("workspace:project-detail", args=[project_id])
