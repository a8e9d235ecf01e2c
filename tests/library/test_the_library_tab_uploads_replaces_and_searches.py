"""The Library tab on the project page, through Django's test client with a real session and CSRF."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from access.services import member_set
from library.models import LibraryDocument, LibraryVersion
from tests.factories import UserFactory
from tests.library.factories import document_at_revision
from tests.library.pdfs import text_pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(owner):
    client = Client(enforce_csrf_checks=False)
    client.force_login(owner)
    return client


def _tab(browser, project, **query):
    return browser.get(f"/projects/{project.pk}/", {"tab": "library", **query})


def _keys(html: str) -> list[str]:
    return re.findall(r'name="idempotency_key" value="([0-9a-f]+)"', html)


def _pdf_file(text: str, name: str = "notes.pdf") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text_pdf([text]), content_type="application/pdf")


def test_the_tab_is_listed_and_every_form_render_gets_its_own_key(browser, owner, project):
    document_at_revision(owner, project, revision=2)

    first, second = _tab(browser, project), _tab(browser, project)

    html = first.content.decode()
    assert first.status_code == 200 and 'href="?tab=library"' in html and 'aria-current="page">Library' in html
    assert len(_keys(html)) == 2, "the upload form and the replace form"
    assert not set(_keys(html)) & set(_keys(second.content.decode()))
    assert "revision 2" in html and "searchable" in html
    version = LibraryVersion.objects.get()
    assert f"/v1/processing/jobs/{version.index_job_id}" in html


def test_uploading_through_the_form_accepts_once_even_when_sent_twice(browser, project):
    key = _keys(_tab(browser, project).content.decode())[0]
    form = {"idempotency_key": key, "title": "Field notes"}

    first = browser.post(f"/projects/{project.pk}/library/upload", {**form, "pdf": _pdf_file("gulls")}, follow=True)
    again = browser.post(f"/projects/{project.pk}/library/upload", {**form, "pdf": _pdf_file("gulls")}, follow=True)

    assert "PDF accepted" in first.content.decode()
    assert "already been accepted" in again.content.decode()
    assert LibraryDocument.objects.get().title == "Field notes" and LibraryVersion.objects.count() == 1
    assert "indexing" in again.content.decode()


def test_a_stale_replace_form_shows_the_conflict_and_the_current_revision(browser, owner, project):
    document = document_at_revision(owner, project, revision=4)
    stale_form = {"revision": "3", "idempotency_key": "stale-form-key", "pdf": _pdf_file("too late")}

    response = browser.post(f"/projects/{project.pk}/library/{document.pk}/replace", stale_form, follow=True)

    html = response.content.decode()
    assert "made from revision 3" in html and "now at revision 4" in html
    assert 'name="revision" value="4"' in html, "the form shown again carries the current revision"
    assert LibraryVersion.objects.filter(document=document).count() == 1


def test_a_current_replace_form_adds_a_version(browser, owner, project):
    document = document_at_revision(owner, project, revision=4)
    form = {"revision": "4", "idempotency_key": "fresh", "pdf": _pdf_file("the new text")}

    browser.post(f"/projects/{project.pk}/library/{document.pk}/replace", form)

    document.refresh_from_db()
    assert document.revision == 5 and LibraryVersion.objects.filter(document=document).count() == 2


def test_the_search_box_shows_highlighted_snippets(browser, owner, project):
    document_at_revision(owner, project, revision=1, text="cormorants dive for fish")

    html = _tab(browser, project, q="cormorants").content.decode()

    assert "<mark>cormorants</mark>" in html and "page 1" in html


def test_a_hostile_search_shows_a_message_not_an_error_page(browser, project):
    response = _tab(browser, project, q="x" * 10_000)

    assert response.status_code == 200 and "at most 500 characters" in response.content.decode()


def test_a_viewer_gets_no_upload_or_replace_forms(owner, project):
    viewer = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=viewer.username, role="viewer")
    document_at_revision(owner, project, revision=1)
    client = Client()
    client.force_login(viewer)

    html = _tab(client, project).content.decode()

    assert "first words" in html or "revision 1" in html
    assert _keys(html) == []
