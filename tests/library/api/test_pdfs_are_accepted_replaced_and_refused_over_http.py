"""The library API: acceptance, idempotent retries, preconditions, refusals and who may do what."""

import pytest

from access.services import member_set
from library.models import LibraryDocument, LibraryVersion
from processing.models import IdempotencyReservation, JobState, OutboxEvent, ProcessingBlob, ProcessingJob
from tests.factories import UserFactory
from tests.library.conftest import post_pdf, put_pdf
from tests.library.factories import document_at_revision
from tests.library.pdfs import damaged_pdf, encrypted_pdf, text_pdf

pytestmark = pytest.mark.django_db

OPERATION = "pdf.index.text/v1"


def test_a_new_pdf_is_accepted_with_its_version_and_a_queued_job(owner_client, project, pdf):
    response = post_pdf(owner_client, project, pdf)

    assert response.status_code == 202, response.json()
    body = response.json()
    document, version, job = body["document"], body["version"], body["job"]
    assert response["ETag"] == '"1"'
    assert (document["revision"], document["requested_version_id"], document["searchable_version_id"]) == (
        1,
        version["id"],
        None,
    )
    assert (version["number"], version["page_count"], version["filename"], version["status"]) == (
        1,
        2,
        "report.pdf",
        "indexing",
    )
    assert (job["operation"], job["state"], job["project_id"]) == (OPERATION, JobState.QUEUED, str(project.pk))
    assert version["job_id"] == job["id"]
    event = OutboxEvent.objects.get(kind="document.version.accepted")
    assert event.payload["version_id"] == version["id"] and event.payload["job_id"] == job["id"]
    assert IdempotencyReservation.objects.get(key="k-1").job_id is not None


def test_the_title_is_the_parameter_then_the_pdf_metadata_then_the_file_name(owner_client, project):
    titled = post_pdf(owner_client, project, text_pdf(["a"], title="From metadata"), key="a", title="Chosen")
    from_metadata = post_pdf(owner_client, project, text_pdf(["b"], title="From metadata"), key="b")
    from_filename = post_pdf(owner_client, project, text_pdf(["c"]), key="c", filename="annual-report.pdf")

    titles = [response.json()["document"]["title"] for response in (titled, from_metadata, from_filename)]
    assert titles == ["Chosen", "From metadata", "annual-report"]


def test_a_retry_with_the_same_key_returns_the_original_version_and_job(owner_client, project, pdf):
    first = post_pdf(owner_client, project, pdf, key="same")
    retry = post_pdf(owner_client, project, pdf, key="same")

    assert (retry.status_code, retry["Idempotent-Replayed"]) == (200, "true")
    assert retry.json()["version"]["id"] == first.json()["version"]["id"]
    assert retry.json()["job"]["id"] == first.json()["job"]["id"]
    assert LibraryVersion.objects.count() == 1 and ProcessingJob.objects.filter(operation=OPERATION).count() == 1
    assert OutboxEvent.objects.filter(kind="document.version.accepted").count() == 1


def test_the_same_key_with_different_bytes_is_a_conflict(owner_client, project, pdf):
    post_pdf(owner_client, project, pdf, key="same")
    response = post_pdf(owner_client, project, text_pdf(["other bytes"]), key="same")

    assert (response.status_code, response.json()["error"]["code"]) == (409, "idempotency_key_reused")
    assert LibraryVersion.objects.count() == 1


def test_a_replacement_at_the_current_revision_is_accepted(owner_client, owner, project, pdf):
    document = document_at_revision(owner, project, revision=7)

    response = put_pdf(owner_client, project, document.pk, pdf, revision=7)

    assert response.status_code == 202, response.json()
    body = response.json()
    assert (body["document"]["revision"], body["version"]["number"], response["ETag"]) == (8, 8, '"8"')
    assert body["document"]["requested_version_id"] == body["version"]["id"]
    assert [version["status"] for version in body["document"]["versions"]] == ["indexing", "searchable"]


def test_a_stale_replacement_gets_412_with_the_current_revision(owner_client, owner, project, pdf):
    document = document_at_revision(owner, project, revision=8)

    response = put_pdf(owner_client, project, document.pk, pdf, revision=7)

    assert response.status_code == 412
    assert response.json()["error"]["code"] == "revision_mismatch"
    assert response.json()["error"]["details"]["current_revision"] == 8
    assert response["ETag"] == '"8"'
    assert LibraryVersion.objects.filter(document=document).count() == 1


@pytest.mark.parametrize(
    ("if_match", "status", "code"),
    [(None, 428, "if_match_required"), ("7", 400, "if_match_invalid"), ('W/"7"', 400, "if_match_invalid"),
     ("*", 400, "if_match_invalid")],
)  # fmt: skip
def test_a_replacement_names_its_revision_in_if_match(owner_client, owner, project, pdf, if_match, status, code):
    document = document_at_revision(owner, project, revision=7)

    response = put_pdf(owner_client, project, document.pk, pdf, revision=if_match)

    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


def test_an_acceptance_without_an_idempotency_key_is_428(owner_client, project, pdf):
    response = owner_client.generic("POST", f"/v1/projects/{project.pk}/library", pdf, content_type="application/pdf")

    assert (response.status_code, response.json()["error"]["code"]) == (428, "idempotency_key_required")


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        (b"hello, I am plain text", 400, "not_a_pdf"),
        (damaged_pdf(), 400, "pdf_unreadable"),
        (encrypted_pdf(), 400, "pdf_encrypted"),
        (b"", 400, "not_a_pdf"),
    ],
    ids=["text", "damaged", "encrypted", "empty"],
)
def test_bad_input_is_refused_and_nothing_is_stored(owner_client, project, data, status, code):
    response = post_pdf(owner_client, project, data)

    assert (response.status_code, response.json()["error"]["code"]) == (status, code)
    assert not LibraryDocument.objects.exists() and not ProcessingBlob.objects.exists()
    assert not OutboxEvent.objects.exists() and not IdempotencyReservation.objects.exists()


def test_an_oversized_pdf_is_413(owner_client, project, pdf, settings):
    settings.LIBRARY_MAX_PDF_BYTES = len(pdf) - 1

    response = post_pdf(owner_client, project, pdf)

    assert (response.status_code, response.json()["error"]["code"]) == (413, "payload_too_large")
    assert not ProcessingBlob.objects.exists()


def test_a_form_encoded_upload_is_415(owner_client, project, pdf):
    response = post_pdf(owner_client, project, pdf, content_type="application/x-www-form-urlencoded")

    assert response.status_code == 415


def test_a_replacement_of_an_unknown_document_is_404(owner_client, project, pdf):
    response = put_pdf(owner_client, project, "00000000-0000-0000-0000-000000000000", pdf, revision=1)

    assert (response.status_code, response.json()["error"]["code"]) == (404, "library_document_not_found")


def test_documents_are_listed_and_served_with_their_revision_as_etag(owner_client, owner, project):
    document = document_at_revision(owner, project, revision=3)

    listing = owner_client.get(f"/v1/projects/{project.pk}/library")
    detail = owner_client.get(f"/v1/projects/{project.pk}/library/{document.pk}")

    assert [item["id"] for item in listing.json()["documents"]] == [str(document.pk)]
    assert (detail.status_code, detail["ETag"], detail.json()["revision"]) == (200, '"3"', 3)


def test_a_viewer_reads_and_searches_but_cannot_upload(api_client_for, owner, project, pdf):
    viewer = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=viewer.username, role="viewer")
    document = document_at_revision(owner, project, revision=1)
    client = api_client_for(viewer)

    assert client.get(f"/v1/projects/{project.pk}/library/{document.pk}").status_code == 200
    assert client.get(f"/v1/projects/{project.pk}/library/search?q=words").status_code == 200
    assert post_pdf(client, project, pdf).status_code == 403
    assert put_pdf(client, project, document.pk, pdf, revision=1).status_code == 403


def test_a_stranger_sees_no_library_at_all(api_client_for, owner, project, pdf):
    document = document_at_revision(owner, project, revision=1)
    client = api_client_for(UserFactory())

    responses = [
        client.get(f"/v1/projects/{project.pk}/library"),
        client.get(f"/v1/projects/{project.pk}/library/{document.pk}"),
        client.get(f"/v1/projects/{project.pk}/library/search?q=words"),
        post_pdf(client, project, pdf),
        put_pdf(client, project, document.pk, pdf, revision=1),
    ]

    assert [response.status_code for response in responses] == [404] * 5
    assert LibraryVersion.objects.count() == 1
