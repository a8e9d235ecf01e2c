"""An export takes no options: whatever body a request carries is ignored by contract (the API's schema
declares none), so two requests that differ only in their bodies ask for the same job."""

import pytest

from processing.models import ProcessingJob
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

EXPORT = "typst.export.pptx/v1"


@pytest.fixture(autouse=True)
def extended(settings, configure_deployment):
    settings.QUIRE_DISTRIBUTION = "extended"
    configure_deployment(operations=["latex.compile.pdf/v1", EXPORT])


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ('{"options": {"engine": "other"}, "project_id": "00000000-0000-4000-8000-000000000000"}', "application/json"),
        ("not json at all", "application/json"),
        ("slides=99", "application/x-www-form-urlencoded"),
    ],
)
def test_an_export_requests_body_is_ignored_and_asks_for_the_same_job(owner, owner_client, body, content_type):
    typst = ProjectFactory(owner=owner, project_type="typst", starter=True)
    url = f"/v1/projects/{typst.pk}/exports/pptx"

    plain = owner_client.post(url, HTTP_IDEMPOTENCY_KEY="export")
    with_body = owner_client.generic("POST", url, body, content_type=content_type, HTTP_IDEMPOTENCY_KEY="export")

    assert (plain.status_code, with_body.status_code) == (202, 200), with_body.content
    assert with_body.json()["id"] == plain.json()["id"]
    [job] = ProcessingJob.objects.all()
    assert (job.operation, job.project_id) == (EXPORT, typst.pk)
