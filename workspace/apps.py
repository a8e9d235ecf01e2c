from django.apps import AppConfig


class WorkspaceConfig(AppConfig):
    name = "workspace"

    def ready(self) -> None:
        from foundation import chores
        from workspace import facade

        chores.chore_register(name="workspace", chore=facade.content_collect)
