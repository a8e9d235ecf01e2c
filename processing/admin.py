"""The operators' admin: read-only history of jobs, attempts, artifacts, blobs, workers and the outbox.

Nothing here edits a row. The two job actions call the same services as the
API and the task center: ``job_cancel_by_operator`` (the API's cancellation
rules) and ``job_retry_by_operator`` (a new linked job; the failed one is never
reopened). Requester and project names come from the Access and Workspace
facades, one query per page.
"""

import uuid
from collections import Counter

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import CharField, Count, OuterRef, Q, Subquery
from django.db.models.functions import Cast, Coalesce
from django.http import HttpResponseBadRequest, HttpResponseNotAllowed, HttpResponseRedirect, JsonResponse
from django.template.defaultfilters import filesizeformat
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince

from access import facade as access
from config.errors import QuireError
from operators import facade as operators
from processing.clock import db_now
from processing.durations import duration_words
from processing.models import (
    AttemptState,
    IdempotencyReservation,
    JobState,
    OutboxEvent,
    ProcessingArtifact,
    ProcessingAttempt,
    ProcessingBlob,
    ProcessingJob,
    StagedOutput,
    WorkerProcessor,
    WorkerSession,
)
from processing.models.jobs import ACTIVE_STATES, TERMINAL_STATES
from processing.queue.cancellation import job_cancel_by_operator
from processing.queue.pauses import operation_pause, operation_resume
from processing.submission.manual_retry import job_is_retryable, job_retry_by_operator
from processing.upkeep.charts import WINDOWS, chart_data
from processing.upkeep.fleet import session_drain_by_operator
from processing.upkeep.overview import processing_overview
from processing.upkeep.timeline import job_timeline
from workspace import facade as workspace


class ReadOnly:
    """History is evidence: operators look, and act only through the actions' services."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(ReadOnly, admin.ModelAdmin):
    show_full_result_count = False


class ReadOnlyInline(ReadOnly, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True


def _blob_link(blob_id) -> str:
    if blob_id is None:
        return "—"
    url = reverse("admin:processing_processingblob_change", args=[blob_id])
    return format_html('<a href="{}">blob {}</a>', url, blob_id)


def _job_link(job_id) -> str:
    if job_id is None:
        return "—"
    url = reverse("admin:processing_processingjob_change", args=[job_id])
    return format_html('<a href="{}"><code>{}</code></a>', url, str(job_id)[:8])


class AttemptInline(ReadOnlyInline):
    model = ProcessingAttempt
    fields = readonly_fields = (
        "number",
        "state",
        "phase",
        "session",
        "processor_contract",
        "started_at",
        "lease_expires_at",
        "ended_at",
        "failure_class",
        "failure_code",
        "failure_message",
    )
    ordering = ("number",)


class ArtifactInline(ReadOnlyInline):
    model = ProcessingArtifact
    fields = readonly_fields = ("role", "filename", "media_type", "size", "sha256", "source_attempt", "created_at")
    ordering = ("role",)

    @admin.display(description="size")
    def size(self, artifact):
        return filesizeformat(artifact.size_bytes)


@admin.register(ProcessingJob)
class ProcessingJobAdmin(ReadOnlyAdmin):
    # Seven narrow columns fit a 1366-px screen beside the filters; the phase and the rest are on the job's page.
    list_display = ("short_id", "operation", "state", "requester", "project", "attempts", "created", "duration")
    list_filter = ("state", "operation", "failure_class", "cache_hit")
    search_fields = ("id",)  # the search itself is get_search_results: ids, requester and project names
    search_help_text = "A job id (or its first characters), a requester's username, or a project's name or id."

    class Media:
        css = {"all": ("processing/admin.css",)}

    ordering = ("-created_at", "-id")
    inlines = (AttemptInline, ArtifactInline)
    actions = ("cancel_jobs", "retry_jobs")
    readonly_fields = (
        "state", "phase", "operation", "requester", "project", "created_at", "queued_at", "started_at",
        "completed_at", "input", "input_digest", "input_filename", "processor_contract", "attempt_count",
        "max_attempts", "cancellation_requested", "linked_jobs", "timeline", "failure_class", "failure_code",
        "failure_message", "diagnostic_entries", "diagnostic_log",
    )  # fmt: skip
    # Top-down: what the job is, what happened to it and when, why it failed; the log last, folded.
    fieldsets = (
        (None, {"fields": (
            ("state", "phase"), ("operation", "processor_contract"), ("requester", "project"),
            ("created_at", "queued_at", "started_at", "completed_at"), ("input", "input_digest", "input_filename"),
            ("attempt_count", "max_attempts", "cancellation_requested"), "linked_jobs",
        )}),
        ("Timeline", {"fields": ("timeline",)}),
        ("Failure", {"fields": (("failure_class", "failure_code"), "failure_message")}),
        ("Diagnostics", {"classes": ("collapse",), "fields": ("diagnostic_entries", "diagnostic_log")}),
    )  # fmt: skip

    def get_urls(self):
        overview = path("overview/", self.admin_site.admin_view(self.overview_view), name="processing_overview")
        act = path("overview/act/", self.admin_site.admin_view(self.overview_act), name="processing_overview_act")
        charts = path(
            "overview/charts/", self.admin_site.admin_view(self.overview_charts), name="processing_overview_charts"
        )
        return [overview, act, charts, *super().get_urls()]

    def overview_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        context = {
            **self.admin_site.each_context(request),
            "title": "Processing overview",
            "opts": self.model._meta,
            "overview": processing_overview(),
            "can_act": operators.can_act(request.user),
        }
        live_only = request.GET.get("part") == "live"  # the page's own refresh (htmx), every few seconds
        template = "admin/processing/overview_live.html" if live_only else "admin/processing/overview.html"
        return TemplateResponse(request, template, context)

    def overview_charts(self, request):
        """The charts' figures for one window, from the rollups (processing/upkeep/charts.py)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        window = request.GET.get("window", "1h")
        if window not in WINDOWS:
            return JsonResponse({"code": "window_unknown", "windows": list(WINDOWS)}, status=400)
        return JsonResponse(chart_data(window, db_now()).as_json())

    def lookup_allowed(self, lookup, value, request=None):
        # The Overview's failure groups link to the jobs of one failure code.
        return lookup == "failure_code__exact" or super().lookup_allowed(lookup, value, request)

    def overview_act(self, request):
        """Pause or resume an operation, or drain a worker session: POST only, and only for an acting operator
        (a read-only one is refused here, not only shown no button)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not operators.can_act(request.user):
            raise PermissionDenied
        action, target = request.POST.get("action", ""), request.POST.get("target", "")
        try:
            message = _overview_actions[action](request.user, target)
        except KeyError:
            return HttpResponseBadRequest("unknown action")
        except (QuireError, ValueError) as exc:
            message, level = getattr(exc, "message", str(exc)), messages.ERROR
        else:
            level = messages.SUCCESS
        self.message_user(request, message, level)
        return HttpResponseRedirect(reverse("admin:processing_overview"))

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The job's page offers its own actions (the same as the list's, on this one job) to an acting operator."""
        job = ProcessingJob.objects.filter(pk=object_id).first() if _is_uuid(object_id) else None
        context = {
            "can_act": operators.can_act(request.user),
            "original_cancellable": job is not None and job.state in ACTIVE_STATES and job.state != JobState.FINALIZING,
            "original_retryable": job is not None and job_is_retryable(job),
            **(extra_context or {}),
        }
        return super().change_view(request, object_id, form_url, extra_context=context)

    def get_changelist_instance(self, request):
        changelist = super().get_changelist_instance(request)
        jobs = list(changelist.result_list)
        usernames = access.usernames_of(user_ids=[job.requester_id for job in jobs])
        projects = workspace.project_names_of(project_ids=[job.project_id for job in jobs])
        for job in jobs:
            job.requester_name = usernames.get(job.requester_id, "")
            job.project_name = projects.get(job.project_id, "")
        return changelist

    def get_search_results(self, request, queryset, search_term):
        term = search_term.strip()
        if not term:
            return queryset, False
        match = Q(requester_id__in=access.user_ids_matching(text=term))
        match |= Q(project_id__in=workspace.project_ids_matching(text=term))
        try:
            exact = uuid.UUID(term)
        except ValueError:
            queryset = queryset.annotate(id_text=Cast("id", output_field=CharField()))
            match |= Q(id_text__startswith=term.lower())
        else:
            match |= Q(pk=exact) | Q(project_id=exact) | Q(retry_of_id=exact)
        return queryset.filter(match), False

    @admin.display(description="job", ordering="id")
    def short_id(self, job):
        return format_html("<code>{}</code>", str(job.pk)[:8])

    @admin.display(description="requester")
    def requester(self, job):
        name = getattr(job, "requester_name", None)
        if name is None:
            name = access.usernames_of(user_ids=[job.requester_id]).get(job.requester_id, "")
        return f"{name or '(deleted user)'} (#{job.requester_id})"

    @admin.display(description="project")
    def project(self, job):
        if job.project_id is None:
            return job.input_filename or "—"
        name = getattr(job, "project_name", None)
        if name is None:
            name = workspace.project_names_of(project_ids=[job.project_id]).get(job.project_id, "")
        return name or f"(deleted) {str(job.project_id)[:8]}"

    @admin.display(description="duration")
    def duration(self, job):
        if job.completed_at is None:
            return "—"
        return format_html('<span class="numeric">{}</span>', duration_words(job.completed_at - job.created_at))

    @admin.display(description="attempts", ordering="attempt_count")
    def attempts(self, job):
        return format_html('<span class="numeric">{}</span>', job.attempt_count)

    @admin.display(description="created", ordering="created_at")
    def created(self, job):
        """How long ago, the exact time on hover."""
        return format_html(
            '<time datetime="{}" title="{}">{} ago</time>',
            job.created_at.isoformat(),
            job.created_at.strftime("%Y-%m-%d %H:%M:%S %Z"),
            timesince(job.created_at),
        )

    @admin.display(description="input blob")
    def input(self, job):
        return _blob_link(job.input_blob_id)

    @admin.display(description="linked jobs")
    def linked_jobs(self, job):
        retries = ProcessingJob.objects.filter(retry_of_id=job.pk).values_list("pk", flat=True)
        parts = [format_html("retry of {}", _job_link(job.retry_of_id))] if job.retry_of_id else []
        parts += [format_html("retried as {}", _job_link(retry)) for retry in retries]
        if job.reused_from_id:
            parts.append(format_html("reused the result of {}", _job_link(job.reused_from_id)))
        return format_html(", ".join(["{}"] * len(parts)), *parts) if parts else "—"

    @admin.display(description="events")
    def timeline(self, job):
        rows = format_html_join(
            "",
            '<tr><td class="numeric" title="{}">{}</td><td class="numeric">{}</td><td>{}</td><td>{}</td></tr>',
            (
                (
                    event.at.isoformat(),
                    event.at.strftime("%H:%M:%S.%f")[:-3],
                    f"+{duration_words(event.since_previous)}" if event.since_previous is not None else "",
                    event.what,
                    event.detail,
                )
                for event in job_timeline(job.pk)
            ),
        )
        return format_html(
            '<table class="job-timeline" data-timeline><thead><tr><th>At</th><th>After</th><th>Event</th>'
            "<th>Detail</th></tr></thead><tbody>{}</tbody></table>",
            rows,
        )

    @admin.display(description="parsed diagnostics")
    def diagnostic_entries(self, job):
        entries = [entry for entry in job.diagnostics if isinstance(entry, dict)]
        lines = [
            f"{e.get('severity', '')}: {e.get('file') or '?'}:{e.get('line') or '?'} {e.get('message', '')}"
            for e in entries
        ]
        return "\n".join(lines) or "—"

    def has_operate_permission(self, request):
        return operators.can_act(request.user)

    @admin.action(description="Cancel selected jobs (the API's rules)", permissions=["operate"])
    def cancel_jobs(self, request, queryset):
        return self._bulk(
            request, queryset, "cancel_jobs", ("cancel", "Cancel"), operators.ActionKind.CANCEL, _cancel_batch
        )

    @admin.action(description="Retry selected failed jobs as new linked jobs", permissions=["operate"])
    def retry_jobs(self, request, queryset):
        return self._bulk(
            request, queryset, "retry_jobs", ("retry", "Retried"), operators.ActionKind.RETRY, _retry_batch
        )

    def _bulk(self, request, queryset, action: str, words: tuple[str, str], kind, batch_run):
        """Confirm, then act on every job the selection holds (a page's ticks, or with "select all" every job
        the filter matches), in batches of ``BULK_BATCH`` that each commit with their share of the one audit
        row, never in one long transaction; the message says what happened to each."""
        verb, done_word = words
        select_across = request.POST.get("select_across") == "1"
        count = queryset.count()
        if request.POST.get("confirmed") is None:
            context = {
                **self.admin_site.each_context(request),
                "opts": self.model._meta,
                "title": f"{verb.capitalize()} {count} jobs",
                "question": f"{verb.capitalize()} all {count} jobs {_selection_words(select_across)}?",
                "count": count,
                "verb": verb,
                "action": action,
                "batch": BULK_BATCH,
                "select_across": select_across,
                "selected": request.POST.getlist(admin.helpers.ACTION_CHECKBOX_NAME),  # Django admin needs them
                "query": request.GET.urlencode(),
                "filter_words": ", ".join(f"{key} = {value}" for key, value in request.GET.items()),
            }
            return TemplateResponse(request, "admin/processing/bulk_confirm.html", context)
        subject = f"all jobs matching {request.GET.urlencode() or 'no filter'}" if select_across else "selected jobs"
        tally = operators.ActionTally(actor=request.user, action=_bulk_kind(kind, select_across), subject=subject)
        last, refusals = None, []
        while batch := _next_batch(queryset, last):
            refusals += batch_run(batch, tally)
            last = batch[-1]
        tally.close()
        self.message_user(request, f"{done_word}: {_outcome_words(tally)}.", messages.SUCCESS)
        if refusals:
            shown = "; ".join(refusals[:REFUSALS_SHOWN]) + (" …" if len(refusals) > REFUSALS_SHOWN else "")
            self.message_user(request, f"Refused: {shown}", messages.WARNING)
        return None


BULK_BATCH = 200
REFUSALS_SHOWN = 20


def _selection_words(select_across: bool) -> str:
    return "this filter matches" if select_across else "you selected"


def _is_uuid(text) -> bool:
    try:
        uuid.UUID(str(text))
    except ValueError:
        return False
    return True


def _next_batch(queryset, after) -> list:
    """The next ids of the selection, by id: the selection's filter is read again for each batch, so a job
    the batch before changed is not met twice."""
    ordered = queryset.order_by("pk")
    return list((ordered.filter(pk__gt=after) if after else ordered).values_list("pk", flat=True)[:BULK_BATCH])


def _bulk_kind(kind, select_across: bool):
    if not select_across:
        return kind
    return operators.ActionKind.BULK_CANCEL if kind == operators.ActionKind.CANCEL else operators.ActionKind.BULK_RETRY


def _cancel_batch(job_ids: list, tally) -> list[str]:
    with transaction.atomic():  # one batch: one short transaction, with its share of the audit record
        tally.add_counts(Counter(cancel_outcome(job_cancel_by_operator(job_id=job_id)) for job_id in job_ids))
    return []


def _retry_batch(job_ids: list, tally) -> list[str]:
    refusals = []
    for job_id in job_ids:  # a retry is a transaction of its own (a new job, admitted as a submission is)
        try:
            job_retry_by_operator(job_id=job_id, recorded=tally.add)
        except QuireError as exc:
            with transaction.atomic():
                tally.add(f"not retried ({exc.code})")
            refusals.append(f"{str(job_id)[:8]}: {exc.message}")
    return refusals


def _pause(actor, operation: str) -> str:
    done = operation_pause(actor=actor, operation=operation)
    return f"{operation} paused: no new claims; running jobs finish." if done else f"{operation} was paused already."


def _resume(actor, operation: str) -> str:
    done = operation_resume(actor=actor, operation=operation)
    return f"{operation} resumed." if done else f"{operation} was not paused."


def _drain(actor, session_id: str) -> str:
    done = session_drain_by_operator(actor=actor, session_id=uuid.UUID(session_id))
    return (
        "Session draining: no new claims; it ends when its running jobs have finished."
        if done
        else ("That session was not active.")
    )


_overview_actions = {"pause": _pause, "resume": _resume, "drain": _drain}


def cancel_outcome(job) -> str:
    """What an operator's cancellation did to a job, in the words the audit trail and the messages use."""
    if job.state == JobState.CANCELLED:
        return "cancelled"
    if job.state == JobState.RUNNING and job.cancellation_requested:
        return "running, asked to stop"
    return f"already {job.state}" if job.state in TERMINAL_STATES else f"left {job.state}"


def _outcome_words(tally) -> str:
    return ", ".join(f"{count} {outcome}" for outcome, count in sorted(tally.outcomes.items())) or "no jobs"


@admin.register(ProcessingAttempt)
class ProcessingAttemptAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "operation", "state", "phase", "session", "started_at", "lease_expires_at", "ended_at")
    list_filter = ("state", "operation", "failure_class")
    search_fields = ("=job__id", "=claim_id")
    ordering = ("-started_at", "-id")
    list_select_related = ("session",)


@admin.register(ProcessingArtifact)
class ProcessingArtifactAdmin(ReadOnlyAdmin):
    list_display = ("job_short", "role", "filename", "media_type", "size", "sha256", "created_at")
    list_filter = ("role", "media_type")
    search_fields = ("=job__id", "filename", "=sha256")
    ordering = ("-created_at",)
    exclude = ("blob",)
    readonly_fields = ("blob_link",)

    @admin.display(description="blob")
    def blob_link(self, artifact):
        return _blob_link(artifact.blob_id)

    @admin.display(description="job")
    def job_short(self, artifact):
        return _job_link(artifact.job_id)

    @admin.display(description="size", ordering="size_bytes")
    def size(self, artifact):
        return filesizeformat(artifact.size_bytes)


def _references(model, field: str):
    counted = model.objects.filter(**{field: OuterRef("pk")}).order_by().values(field).annotate(n=Count("pk"))
    return Coalesce(Subquery(counted.values("n")[:1]), 0)


@admin.register(ProcessingBlob)
class ProcessingBlobAdmin(ReadOnlyAdmin):
    list_display = ("id", "digest", "size", "created_at", "touched_at", "as_input", "as_artifact", "as_staged")
    search_fields = ("=sha256",)
    ordering = ("-touched_at",)
    fields = ("sha256", "size_bytes", "created_at", "touched_at", "as_input", "as_artifact", "as_staged")
    readonly_fields = fields

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .defer("data")  # the bytes stay in the database; the admin shows what refers to them
            .annotate(
                inputs=_references(ProcessingJob, "input_blob"),
                artifacts=_references(ProcessingArtifact, "blob"),
                staged=_references(StagedOutput, "blob"),
            )
        )

    @admin.display(description="sha256")
    def digest(self, blob):
        return format_html("<code>{}…</code>", blob.sha256[:16])

    @admin.display(description="size", ordering="size_bytes")
    def size(self, blob):
        return filesizeformat(blob.size_bytes)

    @admin.display(description="job inputs", ordering="inputs")
    def as_input(self, blob):
        return blob.inputs

    @admin.display(description="artifacts", ordering="artifacts")
    def as_artifact(self, blob):
        return blob.artifacts

    @admin.display(description="staged outputs", ordering="staged")
    def as_staged(self, blob):
        return blob.staged


class ProcessorInline(ReadOnlyInline):
    model = WorkerProcessor
    fields = readonly_fields = ("operation", "processor_contract", "runtime_version", "slots", "healthy")
    show_change_link = False


class LiveClaimInline(ReadOnlyInline):
    model = ProcessingAttempt
    verbose_name_plural = "live claims (running attempts)"
    fields = readonly_fields = ("job", "number", "operation", "phase", "claim_id", "started_at", "lease_expires_at")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(state=AttemptState.RUNNING)


@admin.register(WorkerSession)
class WorkerSessionAdmin(ReadOnlyAdmin):
    list_display = ("identity", "instance", "state", "registered_at", "last_heartbeat_at", "expires_at", "live_claims")
    list_filter = ("state", "identity")
    search_fields = ("identity", "instance", "=id")
    ordering = ("-last_heartbeat_at",)
    inlines = (ProcessorInline, LiveClaimInline)

    def get_queryset(self, request):
        running = Count("attempts", filter=Q(attempts__state=AttemptState.RUNNING))
        return super().get_queryset(request).annotate(live=running)

    @admin.display(description="live claims", ordering="live")
    def live_claims(self, session):
        return session.live


class DispatchedFilter(admin.SimpleListFilter):
    title = "publication"
    parameter_name = "dispatched"

    def lookups(self, request, model_admin):
        return (("no", "pending"), ("yes", "dispatched"))

    def queryset(self, request, queryset):
        if self.value() in ("yes", "no"):
            return queryset.filter(dispatched_at__isnull=self.value() == "no")
        return queryset


@admin.register(OutboxEvent)
class OutboxEventAdmin(ReadOnlyAdmin):
    list_display = ("kind", "event_id", "created_at", "available_at", "dispatched_at", "attempts", "last_error")
    list_filter = (DispatchedFilter, "kind")
    search_fields = ("=event_id", "kind")
    ordering = ("-created_at", "-id")


@admin.register(IdempotencyReservation)
class IdempotencyReservationAdmin(ReadOnlyAdmin):
    list_display = ("actor_id", "endpoint", "key", "job_short", "created_at", "expires_at")
    list_filter = ("endpoint",)
    search_fields = ("=key", "=job__id")
    ordering = ("-created_at",)

    @admin.display(description="job")
    def job_short(self, reservation):
        return _job_link(reservation.job_id)
