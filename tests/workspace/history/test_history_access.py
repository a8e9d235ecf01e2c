"""Who may read and change history, and bad input refused with a code and changing nothing."""

import pytest

from tests.factories import UserFactory
from tests.workspace.history.conftest import history_of, put_text
from workspace.history.models import Label

pytestmark = pytest.mark.django_db

READS = ["history", "history/1/files/main.tex", "history/1/diff", "history/1/archive", "labels"]


@pytest.mark.parametrize("route", READS)
def test_a_project_you_cannot_see_is_404_on_every_reading_route(project, api_client_for, route):
    stranger = api_client_for(UserFactory())

    answer = stranger.get(f"/v1/projects/{project.pk}/{route}")

    assert answer.status_code == 404


def test_a_stranger_can_neither_restore_nor_label(owner_client, project, api_client_for):
    stranger = api_client_for(UserFactory())

    restored = stranger.post(f"/v1/projects/{project.pk}/history/1/restore", {}, format="json")
    labelled = stranger.post(f"/v1/projects/{project.pk}/labels", {"name": "mine"}, format="json")

    assert restored.status_code == labelled.status_code == 404
    assert not Label.objects.exists() and len(history_of(owner_client, project)) == 1


@pytest.mark.parametrize("route", READS)
def test_a_viewer_reads_history(project, viewer, api_client_for, route):
    assert api_client_for(viewer).get(f"/v1/projects/{project.pk}/{route}").status_code == 200


def test_a_viewer_can_neither_restore_nor_label(owner_client, project, viewer, api_client_for, time_passes):
    time_passes(3600)
    put_text(owner_client, project, "main.tex", "changed\n")
    reviewer = api_client_for(viewer)

    restored = reviewer.post(f"/v1/projects/{project.pk}/history/1/restore", {}, format="json")
    labelled = reviewer.post(f"/v1/projects/{project.pk}/labels", {"name": "mine"}, format="json")

    assert restored.status_code == labelled.status_code == 403
    assert owner_client.get(f"/v1/projects/{project.pk}/files/main.tex").content == b"changed\n"
    assert not Label.objects.exists()


@pytest.mark.parametrize(
    "method, route, body, status, code",
    [
        ("get", "history/99/files/main.tex", None, 404, "version_not_found"),
        ("get", "history/99999999999999999999/files/main.tex", None, 404, "version_not_found"),
        ("get", "history/1/diff?against=99", None, 404, "version_not_found"),
        ("get", "history/1/diff?against=yesterday", None, 400, "invalid_query"),
        ("get", "history?before=abc", None, 400, "invalid_query"),
        ("get", "history?before=%C2%B2", None, 400, "invalid_query"),
        ("get", "history/1/diff?against=%C2%B2", None, 400, "invalid_query"),
        ("post", "history/1/restore", ["main.tex"], 400, "invalid_query"),
        ("post", "history/1/restore", {"paths": None}, 400, "invalid_query"),
        ("get", "history/99/archive", None, 404, "version_not_found"),
        ("post", "history/99/restore", {}, 404, "version_not_found"),
        ("post", "history/1/restore", {"paths": "main.tex"}, 400, "invalid_query"),
        ("post", "history/1/restore", {"paths": [1]}, 400, "invalid_query"),
        ("get", "history?path=a%00b", None, 400, "invalid_text"),
    ],
)
def test_bad_input_is_refused_with_a_code_and_changes_nothing(owner_client, project, method, route, body, status, code):
    before = history_of(owner_client, project)

    answer = getattr(owner_client, method)(f"/v1/projects/{project.pk}/{route}", body, format="json")

    assert (answer.status_code, answer.json()["error"]["code"]) == (status, code)
    assert history_of(owner_client, project) == before


def test_a_viewer_comments_but_cannot_edit(owner_client, project, viewer, api_client_for):
    reviewer = api_client_for(viewer)

    commented = reviewer.post(
        f"/v1/projects/{project.pk}/comments", {"path": "main.tex", "from": 0, "to": 3, "text": "typo?"}, format="json"
    )
    edited = reviewer.put(f"/v1/projects/{project.pk}/files/main.tex", b"mine now", content_type="text/plain")

    assert commented.status_code == 201
    assert edited.status_code == 403
    assert history_of(owner_client, project)[0]["id"] == 1  # a comment is no change to the files
