from django.apps import AppConfig


class CollaborationConfig(AppConfig):
    name = "collaboration"

    def ready(self) -> None:
        from access import facade as access
        from collaboration.keeper import CollaborationKeeper
        from workspace import facade as workspace

        workspace.document_keeper_register(keeper=CollaborationKeeper())
        # Open project pages hear at once of a new output, a changed tree, changed members (project_events.py).
        workspace.project_changed.connect(_project_changed, dispatch_uid="collaboration.project_changed")
        access.members_changed.connect(_members_changed, dispatch_uid="collaboration.members_changed")


def _project_changed(sender, *, project_id, what, **kwargs) -> None:
    from collaboration.live import relay

    relay.project_changed(project_id=project_id, what=what)


def _members_changed(sender, *, project_id, **kwargs) -> None:
    from collaboration.live import relay
    from collaboration.live.project_events import MEMBERS

    relay.project_changed(project_id=project_id, what=MEMBERS)
