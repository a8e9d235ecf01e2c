from django.contrib import admin

from collaboration.models import DocumentLog


@admin.register(DocumentLog)
class DocumentLogAdmin(admin.ModelAdmin):
    list_display = ["file_id", "project_id", "last_seq", "snapshot_seq", "projected_seq"]
    search_fields = ["project_id"]
    readonly_fields = ["project_id", "file_id", "snapshot_seq", "last_seq", "projected_seq"]
    exclude = ["snapshot"]
