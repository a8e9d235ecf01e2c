"""The server-rendered pages, through Django's test client with a real session and CSRF."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from access.models import ProjectGrant
from tests.factories import ProjectFactory, UserFactory
from workspace.models import Project, ProjectFile

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(owner):
    client = Client()
    client.force_login(owner)
    return client


def test_sign_in_with_the_form():
    user = UserFactory(username="alice")
    client = Client()
    response = client.post("/login/", {"username": "alice", "password": "password123"}, follow=True)
    assert response.status_code == 200
    assert response.context["user"] == user


def test_pages_need_a_sign_in(project):
    response = Client().get(f"/projects/{project.pk}/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_new_project_starts_from_a_template(browser, owner):
    response = browser.post("/projects/new", {"name": "Thesis", "type": "typst", "compiler": "pdflatex"})
    project = Project.objects.get(name="Thesis")
    assert response.status_code == 302
    assert project.type == "typst" and project.compiler == ""
    assert list(ProjectFile.objects.filter(project=project).values_list("path", flat=True)) == ["main.typ"]


def test_project_page_shows_tree_and_editor(browser, project):
    browser.post(f"/projects/{project.pk}/files/new", {"path": "chapters/intro.tex"})
    response = browser.get(f"/projects/{project.pk}/?file=main.tex")
    page = response.content.decode()
    assert response.status_code == 200
    assert "chapters/" in page and "intro.tex" in page
    assert "\\documentclass" in page


def test_a_text_document_opens_in_the_live_editor_with_its_text_readable_before_it_syncs(browser, project):
    file = ProjectFile.objects.get(project=project, path="main.tex")
    page = browser.get(f"/projects/{project.pk}/?file=main.tex").content.decode()
    assert 'data-live-editor data-socket-path="/ws/projects/' in page
    assert f'data-room="{file.pk}"' in page and 'data-may-edit="true"' in page
    assert 'class="code editor-fallback"' in page and "\\documentclass" in page
    assert "bundles/editor.js" in page
    assert "documents/save" not in page  # typing is saving: there is no Save form


def test_upload_rename_and_delete(browser, project):
    upload = SimpleUploadedFile("plot.png", b"\x89PNG\r\n", content_type="image/png")
    browser.post(f"/projects/{project.pk}/upload", {"files": [upload], "folder": "figures"})
    assert ProjectFile.objects.filter(project=project, path="figures/plot.png", kind="asset").exists()

    browser.post(f"/projects/{project.pk}/files/rename", {"path": "figures/plot.png", "new_path": "img/plot.png"})
    assert ProjectFile.objects.filter(project=project, path="img/plot.png").exists()

    browser.post(f"/projects/{project.pk}/files/delete", {"path": "img/plot.png"})
    assert not ProjectFile.objects.filter(project=project, path__endswith="plot.png").exists()


def test_a_refused_change_shows_its_message(browser, project):
    response = browser.post(f"/projects/{project.pk}/files/new", {"path": "../escape.tex"}, follow=True)
    assert "must not contain empty" in response.content.decode()


def test_settings_and_members(browser, project):
    friend = UserFactory(username="friend")
    browser.post(
        f"/projects/{project.pk}/settings",
        {"name": "Renamed", "entry_path": "main.tex", "compiler": "xelatex"},
    )
    browser.post(f"/projects/{project.pk}/members/set", {"username": friend.username, "role": "viewer"})
    project.refresh_from_db()
    assert (project.name, project.compiler) == ("Renamed", "xelatex")
    page = browser.get(f"/projects/{project.pk}/?tab=members").content.decode()
    assert "friend" in page


def test_another_users_project_is_404(browser):
    stranger_project = ProjectFactory(starter=True)
    assert browser.get(f"/projects/{stranger_project.pk}/").status_code == 404
    assert browser.post(f"/projects/{stranger_project.pk}/files/new", {"path": "x.tex"}).status_code == 404


def test_viewer_sees_a_read_only_editor_and_no_upload(project, owner):
    from access.services import member_set

    viewer = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=viewer.username, role="viewer")
    client = Client()
    client.force_login(viewer)
    page = client.get(f"/projects/{project.pk}/").content.decode()
    assert 'data-may-edit="false"' in page and "read-only" in page and "Upload files" not in page


def test_api_tokens_page_shows_a_new_token_once(browser):
    page = browser.post("/account/tokens", {"name": "laptop"}).content.decode()
    assert "quire_" in page
    assert "quire_" not in browser.get("/account/tokens").content.decode().split("<pre")[-1]


def test_a_new_file_with_url_characters_in_its_name_opens_that_file(browser, project):
    response = browser.post(f"/projects/{project.pk}/files/new", {"path": "a&b #1+2.tex"})
    assert response.status_code == 302
    assert response["Location"].endswith("?file=a%26b+%231%2B2.tex")
    page = browser.get(response["Location"]).content.decode()
    assert "a&amp;b #1+2.tex" in page


def test_an_uploaded_html_asset_downloads_as_an_inert_attachment(browser, project):
    upload = SimpleUploadedFile("page.html", b"<script>alert(1)</script>", content_type="text/html")
    browser.post(f"/projects/{project.pk}/upload", {"files": [upload]})
    response = browser.get(f"/projects/{project.pk}/files/raw/page.html")
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Security-Policy"].startswith("sandbox")


def test_an_unknown_role_from_the_form_is_refused_with_its_message(browser, project):
    friend = UserFactory()
    response = browser.post(
        f"/projects/{project.pk}/members/set", {"username": friend.username, "role": "admin"}, follow=True
    )
    assert "not a project role" in response.content.decode()
    assert not ProjectGrant.objects.filter(project_id=project.pk, user=friend).exists()


def test_a_project_name_over_the_limit_is_refused_with_its_message(browser, project):
    response = browser.post(
        f"/projects/{project.pk}/settings",
        {"name": "n" * 201, "entry_path": "main.tex", "compiler": "pdflatex"},
        follow=True,
    )
    assert "at most 200 characters" in response.content.decode()
    project.refresh_from_db()
    assert project.name != "n" * 201


def test_a_legacy_encoded_file_is_shown_decoded_read_only_and_converts(browser, project):
    source = "\\usepackage[latin1]{inputenc}\nÄrger über Öl\n".encode("latin-1")
    upload = SimpleUploadedFile("old.tex", source, content_type="text/x-tex")
    browser.post(f"/projects/{project.pk}/upload", {"files": [upload]})

    page = browser.get(f"/projects/{project.pk}/?file=old.tex").content.decode()

    assert "Ärger über Öl" in page and "ISO-8859-1 (Latin-1)" in page
    assert "data-live-editor" not in page and "Convert to UTF-8" in page
    response = browser.post(f"/projects/{project.pk}/files/convert", {"path": "old.tex"})
    assert response.status_code == 302
    converted = ProjectFile.objects.get(project=project, path="old.tex")
    assert (converted.kind, converted.encoding) == ("text", "")
    assert "data-live-editor" in browser.get(f"/projects/{project.pk}/?file=old.tex").content.decode()


def test_the_tree_lists_empty_folders_and_is_404_to_a_stranger(browser, project):
    browser.post(f"/projects/{project.pk}/folders/new", {"path": "figures/empty"})

    tree = browser.get(f"/projects/{project.pk}/tree").content.decode()

    assert 'data-path="figures"' in tree and 'data-path="figures/empty"' in tree and 'data-kind="folder"' in tree
    stranger = Client()
    stranger.force_login(UserFactory())
    assert stranger.get(f"/projects/{project.pk}/tree").status_code == 404


def test_uploads_answer_a_script_in_the_apis_shape(browser, project):
    first = SimpleUploadedFile("main.tex", b"new text", content_type="text/plain")
    response = browser.post(f"/projects/{project.pk}/upload", {"files": [first]}, HTTP_ACCEPT="application/json")

    assert response.status_code == 409
    assert response.json()["error"] == {
        "code": "archive_conflicts",
        "message": "Files with these paths exist already; send ?overwrite=true to replace them.",
        "details": {"paths": ["main.tex"]},
    }
    again = SimpleUploadedFile("main.tex", b"new text", content_type="text/plain")
    replaced = browser.post(
        f"/projects/{project.pk}/upload", {"files": [again], "overwrite": "1"}, HTTP_ACCEPT="application/json"
    )
    assert replaced.json() == {"written": ["main.tex"], "legacy_encoded": []}


def test_a_project_is_made_from_a_zip_on_the_new_project_page(browser, owner):
    import io
    import zipfile

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("thesis/thesis.tex", "\\documentclass{report}\\begin{document}T\\end{document}")
    upload = SimpleUploadedFile("thesis.zip", archive.getvalue(), content_type="application/zip")

    response = browser.post("/projects/new/upload", {"archive": upload})

    project = Project.objects.get(name="thesis")
    assert response["Location"] == f"/projects/{project.pk}/"
    assert (project.type, project.entry_path) == ("latex", "thesis.tex")


def test_every_page_names_its_icon_and_the_browsers_default_address_finds_it(browser):
    page = browser.get("/").content.decode()
    default = Client().get("/favicon.ico")

    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    assert (default.status_code, default["Location"]) == (301, "/static/favicon.svg")
    icon = Client().get("/static/favicon.svg")
    assert icon.status_code == 200 and icon["Content-Type"].startswith("image/svg+xml")
