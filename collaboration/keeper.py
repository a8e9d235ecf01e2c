"""Collaboration as Workspace's keeper of text documents (see ``workspace.documents``)."""

import uuid

from collaboration import services


class CollaborationKeeper:
    def projection_bring_up_to_date(self, *, project_id: uuid.UUID, file_id: int) -> None:
        services.projection_flush(project_id=project_id, file_id=file_id)

    def projections_pending(self, *, project_id: uuid.UUID) -> None:
        services.projection_pending(project_id=project_id)

    def text_replace(
        self, *, actor_id: int, project_id: uuid.UUID, path: str, text: str, expected_version: int | None
    ) -> None:
        services.text_edit(
            actor_id=actor_id, project_id=project_id, path=path, text=text, expected_version=expected_version
        )

    def texts_replace(self, *, actor_id: int, project_id: uuid.UUID, texts: list[tuple[int, str]]) -> None:
        for file_id, text in texts:
            services.text_edit_within(actor_id=actor_id, project_id=project_id, file_id=file_id, text=text)
