from django.contrib import admin

from operators.models import OperatorAction


@admin.register(OperatorAction)
class OperatorActionAdmin(admin.ModelAdmin):
    """The audit trail, read-only for everybody: nobody edits evidence."""

    list_display = ("at", "actor_name", "action", "subject", "count", "outcome_text")
    list_filter = ("action",)
    search_fields = ("actor_name", "subject")
    date_hierarchy = "at"
    show_full_result_count = False

    @admin.display(description="outcome")
    def outcome_text(self, action):
        return ", ".join(f"{count} {outcome}" for outcome, count in sorted(action.outcome.items())) or "—"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
