"""What other contexts may ask Collaboration."""

import uuid

from collaboration import services

__all__ = ["projection_pending"]


def projection_pending(*, project_id: uuid.UUID) -> int:
    """Inside the capture transaction (fence held): project every accepted update into Workspace."""
    return services.projection_pending(project_id=project_id)
