"""The preview and inspection endpoints, the prewarm after upload, the page pane and /metrics.

The host reads sources on its own threads with their own database connections,
so these tests commit their data (``transaction=True``). The engine is a fake.
"""

import asyncio
import hashlib

import pytest
from asgiref.sync import async_to_sync
from rest_framework.test import APIClient

from office import services
from office.exceptions import ConversionFailed
from tests.factories import UserFactory, bearer_token_for
from tests.office.asgi import asgi_get

pytestmark = pytest.mark.django_db(transaction=True)


def upload(client, project, path: str, data: bytes) -> None:
    response = client.put(f"/v1/projects/{project.pk}/files/{path}", data, content_type="application/octet-stream")
    assert response.status_code in (200, 201), response.content


def preview_url(project, path: str) -> str:
    return f"/v1/projects/{project.pk}/files/{path}/preview.pdf"


def assert_error(response, status: int, code: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]


@pytest.fixture
def no_prewarm(settings):
    settings.OFFICE_BACKGROUND_ENABLED = False


@pytest.mark.usefixtures("no_prewarm")
def test_an_office_file_is_served_as_pdf_then_from_the_cache(owner_client, project, instant_office):
    upload(owner_client, project, "docs/report.docx", b"report bytes")
    first = owner_client.get(preview_url(project, "docs/report.docx"))
    second = owner_client.get(preview_url(project, "docs/report.docx"))
    assert first.status_code == 200 and first["Content-Type"] == "application/pdf"
    assert first.content == b"%PDF-1.7 report bytes"
    assert 'filename="report.pdf"' in first["Content-Disposition"]
    assert (first["X-Office-Cache"], second["X-Office-Cache"]) == ("miss", "hit")
    assert second.content == first.content
    assert instant_office.engine.sources == [b"report bytes"]


def test_a_stranger_is_404_and_never_reaches_the_cache(owner_client, project, instant_office, api_client_for):
    upload(owner_client, project, "report.docx", b"secret")
    assert owner_client.get(preview_url(project, "report.docx")).status_code == 200
    hits_before = instant_office.snapshot().cache_hits
    stranger = api_client_for(UserFactory())
    assert_error(stranger.get(preview_url(project, "report.docx")), 404, "project_not_found")
    assert instant_office.snapshot().cache_hits == hits_before


def test_a_removed_member_loses_a_preview_they_had_from_the_cache(owner_client, project, instant_office):
    viewer = UserFactory()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_token_for(viewer)}")
    upload(owner_client, project, "report.docx", b"shared")
    owner_client.post(
        f"/v1/projects/{project.pk}/members", {"username": viewer.username, "role": "viewer"}, format="json"
    )
    assert client.get(preview_url(project, "report.docx")).status_code == 200
    owner_client.delete(f"/v1/projects/{project.pk}/members/{viewer.username}")
    assert_error(client.get(preview_url(project, "report.docx")), 404, "project_not_found")


def test_a_file_literally_named_preview_pdf_is_still_a_file(owner_client, project, instant_office):
    upload(owner_client, project, "notes/preview.pdf", b"%PDF-its own bytes")
    response = owner_client.get(f"/v1/projects/{project.pk}/files/notes/preview.pdf")
    assert response.status_code == 200 and response.content == b"%PDF-its own bytes"
    assert instant_office.engine.sources == []


def test_a_missing_office_file_is_404_in_the_error_shape(owner_client, project, instant_office):
    assert_error(owner_client.get(preview_url(project, "absent.pptx")), 404, "file_not_found")


def test_an_anonymous_preview_is_401(project, instant_office):
    assert_error(APIClient().get(preview_url(project, "report.docx")), 401, "not_authenticated")


@pytest.mark.usefixtures("no_prewarm")
def test_a_failed_conversion_is_422_in_the_error_shape(owner_client, project, instant_office):
    upload(owner_client, project, "broken.xlsx", b"not a spreadsheet")
    instant_office.engine.failure = ConversionFailed()
    assert_error(owner_client.get(preview_url(project, "broken.xlsx")), 422, "office_conversion_failed")


def test_inspection_reports_page_count_generation_and_source_digest(owner_client, project, instant_office):
    upload(owner_client, project, "slides.PPTX", b"slides")
    response = owner_client.get(f"/v1/projects/{project.pk}/files/slides.PPTX/inspection")
    assert response.status_code == 200
    body = response.json()
    assert (body["page_count"], body["converter_generation"]) == (2, 1)
    assert body["source_sha256"] == hashlib.sha256(b"slides").hexdigest()


def test_uploading_an_office_file_prewarms_its_preview(owner_client, project, instant_office):
    upload(owner_client, project, "report.odt", b"prewarmed")
    instant_office.call(instant_office.host.idle())
    assert instant_office.engine.sources == [b"prewarmed"]
    assert owner_client.get(preview_url(project, "report.odt"))["X-Office-Cache"] == "hit"


def test_switching_background_off_stops_prewarms_but_not_previews(owner_client, project, instant_office):
    services.background_set(enabled=False)
    upload(owner_client, project, "report.ods", b"not prewarmed")
    instant_office.call(instant_office.host.idle())
    assert instant_office.engine.sources == []
    assert owner_client.get(preview_url(project, "report.ods")).status_code == 200


@pytest.mark.usefixtures("no_prewarm")
def test_a_client_that_disconnects_cancels_its_conversion(owner, owner_client, project, held_office):
    upload(owner_client, project, "big.docx", b"big")
    token = bearer_token_for(owner)

    async def scenario():
        async with asyncio.timeout(20):  # a request that ignored the disconnect would hang here
            disconnected = asyncio.Event()
            request = asyncio.create_task(
                asgi_get(preview_url(project, "big.docx"), token=token, disconnected=disconnected)
            )
            conversion = await held_office.run(held_office.engine.call(1))
            disconnected.set()
            await request
            await held_office.run(conversion.cancelled.wait())
            await held_office.run(held_office.host.idle())

    async_to_sync(scenario)()
    assert held_office.snapshot().outcomes == {"cancelled": 1}


def test_the_project_page_shows_a_preview_pane_for_office_files_only(client, owner, project, instant_office):
    client.force_login(owner)
    owner_client = APIClient()
    owner_client.force_authenticate(owner)
    upload(owner_client, project, "deck.pptx", b"deck")
    upload(owner_client, project, "figure.png", b"\x89PNG")
    deck = client.get(f"/projects/{project.pk}/?file=deck.pptx").content.decode()
    figure = client.get(f"/projects/{project.pk}/?file=figure.png").content.decode()
    assert f'data-src="/v1/projects/{project.pk}/files/deck.pptx/preview.pdf"' in deck
    assert "preview.pdf" not in figure


@pytest.mark.usefixtures("no_prewarm")
def test_metrics_are_served_to_loopback_only(client, owner_client, project, instant_office):
    upload(owner_client, project, "report.docx", b"counted")
    owner_client.get(preview_url(project, "report.docx"))
    local = client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert 'quire_office_conversions_total{outcome="succeeded"} 1.0' in local
    assert 'quire_office_queue_length{priority="foreground"} 0.0' in local
    assert "quire_office_converter_generation 1.0" in local
    assert client.get("/metrics", REMOTE_ADDR="203.0.113.9").status_code == 404
