from django.contrib import admin

from library.models import LibraryDocument, LibraryVersion


class LibraryVersionInline(admin.TabularInline):
    model = LibraryVersion
    fields = ["number", "filename", "page_count", "size_bytes", "sha256", "index_job_id", "created_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-number"]


@admin.register(LibraryDocument)
class LibraryDocumentAdmin(admin.ModelAdmin):
    """Read-only: versions are accepted only through the acceptance transaction."""

    list_display = ["title", "project", "revision", "requested_version", "searchable_version", "updated_at"]
    search_fields = ["title", "id"]
    readonly_fields = ["id", "project", "title", "revision", "requested_version", "searchable_version",
                       "created_by_id", "created_at", "updated_at"]  # fmt: skip
    inlines = [LibraryVersionInline]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
