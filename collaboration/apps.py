from django.apps import AppConfig


class CollaborationConfig(AppConfig):
    name = "collaboration"

    def ready(self) -> None:
        from access import facade as access
        from collaboration import facade, signals
        from collaboration.keeper import CollaborationKeeper
        from foundation import chores
        from workspace import facade as workspace

        workspace.document_keeper_register(keeper=CollaborationKeeper())
        # The services announce what they stored; the live layer above them relays it (collaboration/signals.py).
        signals.update_stored.connect(_update_stored, dispatch_uid="collaboration.relay_update_stored")
        signals.project_changed.connect(_project_changed, dispatch_uid="collaboration.relay_project_changed")
        # Open project pages hear at once of a new output, a changed tree, changed members (project_events.py).
        workspace.project_changed.connect(_project_changed, dispatch_uid="collaboration.project_changed")
        access.members_changed.connect(_members_changed, dispatch_uid="collaboration.members_changed")
        chores.chore_register(name="documents", chore=facade.logs_upkeep)


def _update_stored(sender, *, project_id, file_id, batch, **kwargs) -> None:
    from collaboration.live import relay

    relay.stored_after_commit(project_id=project_id, file_id=file_id, batch=batch)


def _project_changed(sender, *, project_id, what, **kwargs) -> None:
    from collaboration.live import relay

    relay.project_changed(project_id=project_id, what=what)


def _members_changed(sender, *, project_id, **kwargs) -> None:
    from collaboration.live import relay
    from collaboration.live.project_events import MEMBERS

    relay.project_changed(project_id=project_id, what=MEMBERS)
