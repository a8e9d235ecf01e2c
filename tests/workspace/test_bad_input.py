"""Every kind of bad input gets a clear 4xx with its code and changes nothing."""

import pytest

from collaboration.models import AcceptedUpdate
from workspace.models import Project, ProjectFile, TextContent

pytestmark = pytest.mark.django_db


@pytest.fixture
def state(project):
    """A fingerprint of everything a refused request must leave untouched."""

    def read():
        fresh = Project.objects.get(pk=project.pk)
        files = sorted(ProjectFile.objects.filter(project=project).values_list("path", "sha256"))
        return fresh.generation, fresh.file_count, fresh.total_bytes, files, AcceptedUpdate.objects.count()

    return read


def _assert_refused(response, status, code):
    assert response.status_code == status, response.content[:300]
    body = response.json()
    assert body["error"]["code"] == code
    assert body["error"]["message"]


@pytest.mark.parametrize(
    "path",
    [
        "..%2Fescape.tex",
        "a/../../b.tex",
        "x/./y.tex",
        "ctrl%01.tex",
        "/".join(["d" * 200] * 6),
        "evil%E2%80%AEtxt.tex",  # a right-to-left override
        "zero%E2%80%8Bwidth.tex",
    ],
)
def test_bad_paths_are_refused(owner_client, project, state, path):
    before = state()
    response = owner_client.put(f"/v1/projects/{project.pk}/files/{path}", b"x", content_type="text/plain")
    assert response.status_code in (400, 404)
    if response.status_code == 400:
        _assert_refused(response, 400, "invalid_path")
    assert state() == before


def test_a_nul_in_a_path_is_refused_as_text_postgresql_cannot_hold(owner_client, project, state):
    before = state()
    response = owner_client.put(f"/v1/projects/{project.pk}/files/%00.tex", b"x", content_type="text/plain")
    _assert_refused(response, 400, "invalid_text")
    assert state() == before


def test_unknown_project_is_404(owner_client):
    response = owner_client.put(
        "/v1/projects/00000000-0000-0000-0000-000000000000/files/a.tex", b"x", content_type="text/plain"
    )
    _assert_refused(response, 404, "project_not_found")


def test_non_uuid_project_is_404_in_the_error_shape(owner_client):
    response = owner_client.get("/v1/projects/not-a-uuid")
    _assert_refused(response, 404, "not_found")


def test_a_nul_in_a_text_document_is_400_invalid_text_and_changes_nothing(owner_client, project, state):
    before = state()
    response = owner_client.put(f"/v1/projects/{project.pk}/files/nul.tex", b"a\x00b", content_type="text/plain")
    _assert_refused(response, 400, "invalid_text")
    assert response.json()["error"]["details"] == {"byte_offset": 1}
    assert state() == before


def test_invalid_utf8_is_refused_where_the_client_asked_for_a_text_document(owner_client, project, state):
    """A file merely named like text is kept in its own encoding (tests/workspace/test_legacy_encodings.py);
    ``?kind=text`` asks for a live text document, which must be UTF-8."""
    before = state()
    response = owner_client.put(
        f"/v1/projects/{project.pk}/files/broken.tex?kind=text", b"ok \xff\xfe", content_type="text/plain"
    )
    _assert_refused(response, 400, "invalid_utf8")
    assert state() == before


def test_oversized_text_document_is_413(owner_client, project, state, settings):
    settings.WORKSPACE_MAX_TEXT_BYTES = 1024
    before = state()
    response = owner_client.put(f"/v1/projects/{project.pk}/files/big.tex", b"a" * 1025, content_type="text/plain")
    _assert_refused(response, 413, "file_too_large")
    assert state() == before


def test_oversized_asset_is_413(owner_client, project, state, settings):
    settings.WORKSPACE_MAX_ASSET_BYTES = 2048
    before = state()
    response = owner_client.put(
        f"/v1/projects/{project.pk}/files/big.png", b"\x89PNG" + b"0" * 4096, content_type="image/png"
    )
    _assert_refused(response, 413, "file_too_large")
    assert state() == before


def test_declared_length_over_the_limit_is_refused_before_reading(owner_client, project, state, settings):
    settings.WORKSPACE_MAX_ASSET_BYTES = 10
    settings.WORKSPACE_MAX_TEXT_BYTES = 10
    before = state()
    response = owner_client.generic(
        "PUT",
        f"/v1/projects/{project.pk}/files/a.bin",
        b"0123456789" * 10,
        content_type="application/octet-stream",
    )
    _assert_refused(response, 413, "payload_too_large")
    assert state() == before


def test_form_encoded_file_body_is_415(owner_client, project, state):
    before = state()
    response = owner_client.generic(
        "PUT",
        f"/v1/projects/{project.pk}/files/a.tex",
        b"a=1",
        content_type="application/x-www-form-urlencoded",
    )
    _assert_refused(response, 415, "unsupported_media_type")
    assert state() == before


def test_json_endpoint_refuses_other_content_types(owner_client):
    response = owner_client.generic("POST", "/v1/projects", b"name=x", content_type="text/plain")
    _assert_refused(response, 415, "unsupported_media_type")
    assert Project.objects.count() == 0


def test_deeply_nested_json_is_400_not_500(owner_client):
    body = b"[" * 20000 + b"]" * 20000
    response = owner_client.generic("POST", "/v1/projects", body, content_type="application/json")
    _assert_refused(response, 400, "malformed_request")


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_nan_and_infinity_are_refused(owner_client, project, literal):
    body = b'{"name": "x", "type": "latex", "extra": ' + literal + b"}"
    response = owner_client.generic("POST", "/v1/projects", body, content_type="application/json")
    _assert_refused(response, 400, "malformed_request")


def test_malformed_json_is_400(owner_client):
    response = owner_client.generic("POST", "/v1/projects", b'{"name": ', content_type="application/json")
    _assert_refused(response, 400, "malformed_request")


def test_duplicate_json_keys_are_refused(owner_client):
    body = b'{"name": "a", "name": "b", "type": "latex"}'
    response = owner_client.generic("POST", "/v1/projects", body, content_type="application/json")
    _assert_refused(response, 400, "malformed_request")


def test_invalid_project_fields_are_400_with_details(owner_client):
    response = owner_client.post("/v1/projects", {"name": "", "type": "word"}, format="json")
    _assert_refused(response, 400, "validation_error")
    assert set(response.json()["error"]["details"]) == {"name", "type"}


def test_entry_path_must_fit_the_type(owner_client, project, state):
    before = state()
    response = owner_client.patch(f"/v1/projects/{project.pk}", {"entry_path": "main.typ"}, format="json")
    _assert_refused(response, 400, "invalid_settings")
    assert state() == before


def test_moving_onto_an_existing_path_is_409(owner_client, project, state):
    owner_client.put(f"/v1/projects/{project.pk}/files/other.tex", b"x", content_type="text/plain")
    before = state()
    response = owner_client.patch(f"/v1/projects/{project.pk}/files/other.tex", {"path": "main.tex"}, format="json")
    _assert_refused(response, 409, "path_exists")
    assert state() == before


def test_a_file_cannot_shadow_a_folder(owner_client, project, state):
    owner_client.put(f"/v1/projects/{project.pk}/files/chapters/one.tex", b"x", content_type="text/plain")
    before = state()
    response = owner_client.put(f"/v1/projects/{project.pk}/files/chapters", b"x", content_type="text/plain")
    _assert_refused(response, 409, "path_conflict")
    response = owner_client.put(f"/v1/projects/{project.pk}/files/main.tex/inner.tex", b"x", content_type="text/plain")
    _assert_refused(response, 409, "path_conflict")
    assert state() == before


def test_file_count_limit(owner_client, project, state, settings):
    settings.WORKSPACE_MAX_FILES = project.file_count
    before = state()
    response = owner_client.put(f"/v1/projects/{project.pk}/files/one-more.tex", b"x", content_type="text/plain")
    _assert_refused(response, 409, "project_limit_reached")
    assert state() == before


def test_project_size_limit(owner_client, project, state, settings):
    settings.WORKSPACE_MAX_PROJECT_BYTES = project.total_bytes + 10
    before = state()
    response = owner_client.put(f"/v1/projects/{project.pk}/files/pad.txt", b"x" * 11, content_type="text/plain")
    _assert_refused(response, 409, "project_limit_reached")
    assert state() == before


def test_nfd_spelling_replaces_the_nfc_file_instead_of_duplicating(owner_client, project):
    import unicodedata

    nfc, nfd = unicodedata.normalize("NFC", "café.tex"), unicodedata.normalize("NFD", "café.tex")
    assert (
        owner_client.put(f"/v1/projects/{project.pk}/files/{nfc}", b"one", content_type="text/plain").status_code == 201
    )
    response = owner_client.put(f"/v1/projects/{project.pk}/files/{nfd}", b"two", content_type="text/plain")
    assert response.status_code == 200
    assert ProjectFile.objects.filter(project=project, path=nfc).count() == 1
    assert not ProjectFile.objects.filter(project=project, path=nfd).exists()


def test_unknown_kind_override_is_400(owner_client, project, state):
    before = state()
    response = owner_client.put(f"/v1/projects/{project.pk}/files/a.dat?kind=video", b"x", content_type="text/plain")
    _assert_refused(response, 400, "invalid_settings")
    assert state() == before


@pytest.mark.parametrize("update", [b"", b"garbage", b"\x01\x01\xff\xff\xff", b"\x05\x00\x01"])
def test_malformed_yjs_updates_are_refused_and_not_stored(owner_client, project, state, update):
    before = state()
    response = owner_client.generic(
        "POST",
        f"/v1/projects/{project.pk}/documents/main.tex/updates",
        update,
        content_type="application/octet-stream",
    )
    _assert_refused(response, 400, "invalid_update")
    assert state() == before


def test_a_yjs_update_inserting_a_nul_is_refused_and_not_stored(owner_client, project, state):
    from pycrdt import Doc, Text

    from collaboration.ydoc import ROOT

    doc = Doc()
    doc[ROOT] = text = Text()
    text.insert(0, "a\x00b")  # PostgreSQL's text cannot hold it once projected
    before = state()

    response = owner_client.generic(
        "POST",
        f"/v1/projects/{project.pk}/documents/main.tex/updates",
        doc.get_update(),
        content_type="application/octet-stream",
    )

    _assert_refused(response, 400, "invalid_update")
    assert "NUL" in response.json()["error"]["message"]
    assert state() == before


def test_yjs_update_with_wrong_content_type_is_415(owner_client, project, state):
    before = state()
    response = owner_client.generic(
        "POST",
        f"/v1/projects/{project.pk}/documents/main.tex/updates",
        b"\x00\x00",
        content_type="application/json",
    )
    _assert_refused(response, 415, "unsupported_media_type")
    assert state() == before


def test_yjs_update_for_an_asset_is_refused(owner_client, project, state):
    owner_client.put(f"/v1/projects/{project.pk}/files/fig.png", b"\x89PNG", content_type="image/png")
    before = state()
    response = owner_client.generic(
        "POST",
        f"/v1/projects/{project.pk}/documents/fig.png/updates",
        b"\x00\x00",
        content_type="application/octet-stream",
    )
    _assert_refused(response, 400, "not_a_text_document")
    assert state() == before


def test_refused_writes_leave_no_text_rows_behind(owner_client, project):
    texts = TextContent.objects.count()
    owner_client.put(f"/v1/projects/{project.pk}/files/../x.tex", b"new text", content_type="text/plain")
    assert TextContent.objects.count() == texts


@pytest.mark.parametrize("name", ["evil\u202etxt.pdf", "zero\u200bwidth", "line\u2028break", "tab\there"])
def test_a_project_name_with_invisible_or_control_characters_is_refused(owner_client, project, name):
    created = owner_client.post("/v1/projects", {"name": name, "type": "latex"}, format="json")
    renamed = owner_client.patch(f"/v1/projects/{project.pk}", {"name": name}, format="json")

    _assert_refused(created, 400, "invalid_settings")
    _assert_refused(renamed, 400, "invalid_settings")
    assert not Project.objects.filter(name=name).exists()
    assert Project.objects.get(pk=project.pk).name == project.name
