"""Admin pages that only look: history is evidence, and operators act only through the actions' services."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html


class ReadOnly:
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(ReadOnly, admin.ModelAdmin):
    show_full_result_count = False  # a count of the whole table on every page is a scan of every job


class ReadOnlyInline(ReadOnly, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True


def blob_link(blob_id) -> str:
    if blob_id is None:
        return "—"
    url = reverse("admin:processing_processingblob_change", args=[blob_id])
    return format_html('<a href="{}">blob {}</a>', url, blob_id)


def job_link(job_id) -> str:
    if job_id is None:
        return "—"
    url = reverse("admin:processing_processingjob_change", args=[job_id])
    return format_html('<a href="{}"><code>{}</code></a>', url, str(job_id)[:8])
