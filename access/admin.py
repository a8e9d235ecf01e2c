from django.contrib import admin

from access.models import ApiToken, ProjectGrant


@admin.register(ProjectGrant)
class ProjectGrantAdmin(admin.ModelAdmin):
    list_display = ["project_id", "user", "role", "created_at"]
    list_filter = ["role"]
    search_fields = ["user__username", "project_id"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "user", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["prefix", "token_sha256", "created_at", "last_used_at"]
    search_fields = ["user__username", "prefix"]
