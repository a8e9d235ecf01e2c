"""Office listens to Workspace's announcements; the work itself is a service."""

from office import services


def file_written_prewarm(sender, *, project_id, path, actor_id, **kwargs) -> None:
    """An Office file was uploaded: convert it now so that its preview is ready when someone opens it."""
    services.prewarm_submit(actor_id=actor_id, project_id=project_id, path=path)
