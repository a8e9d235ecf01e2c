from datetime import timedelta

import pytest
from django.db.models import F

from access import facade as access
from tests.factories import UserFactory
from workspace.history.models import FileChange, Version


@pytest.fixture
def coauthor(project, owner):
    user = UserFactory(username="coauthor")
    access.member_set(actor_id=owner.pk, project_id=project.pk, username=user.username, role="editor")
    return user


@pytest.fixture
def viewer(project, owner):
    user = UserFactory(username="reviewer")
    access.member_set(actor_id=owner.pk, project_id=project.pk, username=user.username, role="viewer")
    return user


@pytest.fixture
def time_passes():
    """``time_passes(seconds)``: every change so far (journalled, or folded into a version already) moves that
    much earlier, as if the next change came after such a pause; no clock is waited for."""

    def backdate(seconds: float) -> None:
        earlier = timedelta(seconds=seconds)
        FileChange.objects.update(at=F("at") - earlier)
        Version.objects.update(started_at=F("started_at") - earlier, ended_at=F("ended_at") - earlier)

    return backdate


def history_of(client, project, **params) -> list[dict]:
    response = client.get(f"/v1/projects/{project.pk}/history", params)
    assert response.status_code == 200, response.content
    return response.json()["versions"]


def put_text(client, project, path: str, text: str):
    response = client.put(
        f"/v1/projects/{project.pk}/files/{path}", text.encode(), content_type="application/octet-stream"
    )
    assert response.status_code in (200, 201), response.content
    return response
