"""The fleet: worker sessions with their processors × slots and live claims (the Overview lists the active
ones with their heartbeat age and drain switch)."""

from django.contrib import admin
from django.db.models import Count, Q

from processing.admin.read_only import ReadOnlyAdmin, ReadOnlyInline
from processing.models import AttemptState, ProcessingAttempt, WorkerProcessor, WorkerSession


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
