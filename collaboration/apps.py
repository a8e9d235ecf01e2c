from django.apps import AppConfig


class CollaborationConfig(AppConfig):
    name = "collaboration"

    def ready(self) -> None:
        from collaboration.keeper import CollaborationKeeper
        from workspace import facade as workspace

        workspace.document_keeper_register(keeper=CollaborationKeeper())
