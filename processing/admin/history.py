"""The history around jobs, read-only: attempts, artifacts, blobs (with what refers to them), outbox events
and idempotency reservations."""

from django.contrib import admin
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.template.defaultfilters import filesizeformat
from django.utils.html import format_html

from processing.admin.filters import FailureClassFilter, MediaTypeFilter, OperationFilter, ResultRoleFilter
from processing.admin.read_only import ReadOnlyAdmin, blob_link, job_link
from processing.models import (
    IdempotencyReservation,
    OutboxEvent,
    ProcessingArtifact,
    ProcessingAttempt,
    ProcessingBlob,
    ProcessingJob,
    StagedOutput,
)


@admin.register(ProcessingAttempt)
class ProcessingAttemptAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "operation", "state", "phase", "session", "started_at", "lease_expires_at", "ended_at")
    list_filter = ("state", OperationFilter, FailureClassFilter)
    search_fields = ("=job__id", "=claim_id")
    # Newest first by id, which grows as attempts start: the primary key's index serves it (started_at has only a
    # BRIN index, for the rollups, and a sort of every attempt would be the page's cost).
    ordering = ("-id",)
    list_select_related = ("session",)


@admin.register(ProcessingArtifact)
class ProcessingArtifactAdmin(ReadOnlyAdmin):
    list_display = ("job_short", "role", "filename", "media_type", "size", "sha256", "created_at")
    list_filter = (ResultRoleFilter, MediaTypeFilter)
    search_fields = ("=job__id", "filename", "=sha256")
    ordering = ("-created_at",)
    exclude = ("blob",)
    readonly_fields = ("blob_link",)

    @admin.display(description="blob")
    def blob_link(self, artifact):
        return blob_link(artifact.blob_id)

    @admin.display(description="job")
    def job_short(self, artifact):
        return job_link(artifact.job_id)

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
        return job_link(reservation.job_id)
