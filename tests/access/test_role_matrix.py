import io
import zipfile

import pytest

from access.models import ApiToken
from access.services import member_set
from access.tokens import token_digest
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def member_client(api_client_for, project, owner):
    """``member_client(role)``: a client for a fresh user holding ``role`` on the project."""

    def make(role: str):
        user = UserFactory()
        member_set(actor_id=owner.pk, project_id=project.pk, username=user.username, role=role)
        return api_client_for(user)

    return make


READ = [
    ("get", "/v1/projects/{id}"),
    ("get", "/v1/projects/{id}/files"),
    ("get", "/v1/projects/{id}/files/main.tex"),
    ("get", "/v1/projects/{id}/members"),
    ("get", "/v1/projects/{id}/archive"),
]


@pytest.mark.parametrize(("method", "url"), READ)
@pytest.mark.parametrize("role", ["owner", "editor", "viewer"])
def test_every_member_can_read(member_client, project, role, method, url):
    response = getattr(member_client(role), method)(url.format(id=project.pk))
    assert response.status_code == 200


@pytest.mark.parametrize(("method", "url"), READ)
def test_non_member_gets_404_not_403(api_client_for, project, method, url):
    response = getattr(api_client_for(UserFactory()), method)(url.format(id=project.pk))
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "project_not_found"


def _write(client, project, action: str):
    url = f"/v1/projects/{project.pk}"
    return {
        "put_file": lambda: client.put(f"{url}/files/new.tex", b"hi", content_type="text/plain"),
        "delete_file": lambda: client.delete(f"{url}/files/main.tex"),
        "move_file": lambda: client.patch(f"{url}/files/main.tex", {"path": "other.tex"}, format="json"),
        "settings": lambda: client.patch(url, {"name": "renamed"}, format="json"),
        "add_member": lambda: client.post(f"{url}/members", {"username": "nobody", "role": "viewer"}, format="json"),
        "delete_project": lambda: client.delete(url),
        "make_folder": lambda: client.post(f"{url}/folders", {"path": "new"}, format="json"),
        "unpack_zip": lambda: client.post(f"{url}/archive", _one_file_zip(), content_type="application/zip"),
    }[action]()


def _one_file_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("z.tex", "hi")
    return buffer.getvalue()


EDITOR_ALLOWED = {"put_file", "delete_file", "move_file", "settings", "make_folder", "unpack_zip"}
WRITES = [
    "put_file",
    "delete_file",
    "move_file",
    "settings",
    "add_member",
    "delete_project",
    "make_folder",
    "unpack_zip",
]


@pytest.mark.parametrize("action", WRITES)
@pytest.mark.parametrize("role", ["editor", "viewer"])
def test_write_actions_follow_the_role(member_client, project, role, action):
    generation = project.generation
    response = _write(member_client(role), project, action)
    project.refresh_from_db()
    if role == "editor" and action in EDITOR_ALLOWED:
        assert response.status_code in (200, 201, 204)
    else:
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "forbidden"
        assert project.generation == generation


@pytest.mark.parametrize(
    "action", ["put_file", "delete_file", "settings", "delete_project", "make_folder", "unpack_zip"]
)
def test_non_member_writes_are_404(api_client_for, project, action):
    response = _write(api_client_for(UserFactory()), project, action)
    assert response.status_code == 404


def test_revoked_member_loses_access_on_the_very_next_request(api_client_for, owner_client, project):
    viewer = UserFactory()
    owner_client.post(
        f"/v1/projects/{project.pk}/members", {"username": viewer.username, "role": "viewer"}, format="json"
    )
    viewer_client = api_client_for(viewer)
    assert viewer_client.get(f"/v1/projects/{project.pk}/files").status_code == 200

    assert owner_client.delete(f"/v1/projects/{project.pk}/members/{viewer.username}").status_code == 204

    assert viewer_client.get(f"/v1/projects/{project.pk}/files").status_code == 404
    assert str(project.pk) not in [item["id"] for item in viewer_client.get("/v1/projects").json()]


def test_project_list_shows_only_visible_projects(api_client_for, project):
    stranger = api_client_for(UserFactory())
    assert stranger.get("/v1/projects").json() == []


def test_the_last_owner_cannot_leave(owner_client, owner, project):
    response = owner_client.delete(f"/v1/projects/{project.pk}/members/{owner.username}")
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "last_owner"


def test_tokens_are_stored_only_as_a_hash(owner):
    from access.services import token_create

    token, plaintext = token_create(user_id=owner.pk, name="laptop")
    stored = ApiToken.objects.get(pk=token.pk)
    assert plaintext not in {stored.prefix, stored.token_sha256, stored.name}
    assert stored.token_sha256 == token_digest(plaintext)


def test_a_revoked_token_is_refused(owner, project):
    from rest_framework.test import APIClient

    from access.services import token_create, token_revoke

    token, plaintext = token_create(user_id=owner.pk, name="ci")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert client.get("/v1/projects").status_code == 200

    token_revoke(user_id=owner.pk, token_id=token.pk)

    response = client.get("/v1/projects")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


@pytest.mark.parametrize("header", ["Bearer", "Bearer quire_nope", "Bearer a, Bearer b", "Bearer " + "x" * 5000])
def test_bad_bearer_tokens_get_401(header):
    from rest_framework.test import APIClient

    response = APIClient().get("/v1/projects", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert "error" in response.json()


def test_anonymous_requests_get_401():
    from rest_framework.test import APIClient

    response = APIClient().get("/v1/projects")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_token_use_is_recorded_to_the_minute(owner):
    from datetime import timedelta

    from rest_framework.test import APIClient

    from access.services import token_create

    token, plaintext = token_create(user_id=owner.pk, name="laptop")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")

    assert client.get("/v1/projects").status_code == 200
    first_use = ApiToken.objects.get(pk=token.pk).last_used_at
    assert first_use is not None

    assert client.get("/v1/projects").status_code == 200
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first_use  # within the minute: no write

    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first_use - timedelta(minutes=2))
    assert client.get("/v1/projects").status_code == 200
    assert ApiToken.objects.get(pk=token.pk).last_used_at > first_use - timedelta(minutes=2)
