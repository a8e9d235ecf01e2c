from django.apps import AppConfig


class WorkspaceConfig(AppConfig):
    name = "workspace"
