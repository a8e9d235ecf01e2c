"""The job list (seven narrow columns that fit a 1366-px screen) and the job's page, which reads top-down:
what the job is, its timeline, its failure, then attempts and artifacts, the diagnostics last with the log
folded (templates/admin/processing/processingjob/change_form.html). Requester and project names come from
the Access and Workspace facades, one query per page."""

import uuid

from django.contrib import admin
from django.contrib.admin.views.main import ChangeList
from django.db.models import CharField, Q
from django.db.models.functions import Cast
from django.template.defaultfilters import filesizeformat
from django.utils.html import format_html, format_html_join
from django.utils.timesince import timesince

from access import facade as access
from operators import facade as operators
from processing.admin.bulk import cancel_selection, retry_selection
from processing.admin.filters import FailureClassFilter, OperationFilter
from processing.admin.overview import overview_urls
from processing.admin.read_only import ReadOnlyAdmin, ReadOnlyInline, blob_link, job_link
from processing.kernel.durations import duration_words
from processing.models import JobState, ProcessingArtifact, ProcessingAttempt, ProcessingJob
from processing.models.jobs import ACTIVE_STATES
from processing.submission.manual_retry import job_is_retryable
from processing.upkeep.timeline import job_timeline
from workspace import facade as workspace


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


class _JobList(ChangeList):
    """The list reads the columns it shows: a job's log and diagnostics can be long, and stay on its page."""

    def get_queryset(self, request, exclude_parameters=None):
        return super().get_queryset(request, exclude_parameters).defer(*_PAGE_ONLY)


_PAGE_ONLY = ("diagnostic_log", "diagnostics", "failure_message", "options", "captured")


@admin.register(ProcessingJob)
class ProcessingJobAdmin(ReadOnlyAdmin):
    # Seven narrow columns fit a 1366-px screen beside the filters; the phase and the rest are on the job's page.
    list_display = ("short_id", "operation", "state", "requester", "project", "attempts", "created", "duration")
    list_filter = ("state", OperationFilter, FailureClassFilter, "cache_hit")
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

    def get_fieldsets(self, request, obj=None):
        if obj is not None and not obj.failure_class:
            return [fieldset for fieldset in self.fieldsets if fieldset[0] != "Failure"]
        return self.fieldsets

    def get_urls(self):
        return [*overview_urls(self), *super().get_urls()]

    def lookup_allowed(self, lookup, value, request=None):
        # The Overview's failure groups link to the jobs of one failure code.
        return lookup == "failure_code__exact" or super().lookup_allowed(lookup, value, request)

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

    def get_changelist(self, request, **kwargs):
        return _JobList

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
        return blob_link(job.input_blob_id)

    @admin.display(description="linked jobs")
    def linked_jobs(self, job):
        retries = ProcessingJob.objects.filter(retry_of_id=job.pk).values_list("pk", flat=True)
        parts = [format_html("retry of {}", job_link(job.retry_of_id))] if job.retry_of_id else []
        parts += [format_html("retried as {}", job_link(retry)) for retry in retries]
        if job.reused_from_id:
            parts.append(format_html("reused the result of {}", job_link(job.reused_from_id)))
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
        return cancel_selection(self, request, queryset)

    @admin.action(description="Retry selected failed jobs as new linked jobs", permissions=["operate"])
    def retry_jobs(self, request, queryset):
        return retry_selection(self, request, queryset)


def _is_uuid(text) -> bool:
    try:
        uuid.UUID(str(text))
    except ValueError:
        return False
    return True
