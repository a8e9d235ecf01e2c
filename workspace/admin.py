from django.contrib import admin

from workspace.models import Project, ProjectFile, SnapshotPin


class ProjectFileInline(admin.TabularInline):
    model = ProjectFile
    fields = ["path", "kind", "size_bytes", "sha256", "updated_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "type", "compiler", "generation", "file_count", "total_bytes", "created_at"]
    list_filter = ["type"]
    search_fields = ["name", "id"]
    readonly_fields = ["id", "generation", "content_changed_at", "file_count", "total_bytes", "created_by_id"]
    inlines = [ProjectFileInline]


@admin.register(SnapshotPin)
class SnapshotPinAdmin(admin.ModelAdmin):
    list_display = ["id", "project_id", "generation", "created_at", "expires_at"]
    readonly_fields = ["id", "project_id", "generation", "digests", "created_at", "expires_at"]
