"""A PDF through the whole path: HTTP upload → a real agent process in bubblewrap → the finalizer → search."""

import json

import pytest

from processing.models import JobState, ProcessingJob
from tests.factories import ProjectFactory, bearer_token_for
from tests.library.pdfs import text_pdf
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.conftest import RawHttp

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_uploaded_pdf_is_indexed_by_a_real_agent_and_found_by_search(owner, protocol_server):
    project = ProjectFactory(owner=owner)
    http = RawHttp(protocol_server.url, bearer_token_for(owner))
    pdf = text_pdf(["Kittiwakes nest on narrow ledges.", "Puffins prefer burrows."], title="Seabirds")

    status, _, body = http.request(
        "POST",
        f"/v1/projects/{project.pk}/library?filename=seabirds.pdf",
        body=pdf,
        headers={"Content-Type": "application/pdf", "Idempotency-Key": "e2e-upload"},
    )
    assert status == 202, body
    accepted = json.loads(body)
    job_id = accepted["job"]["id"]

    with running_agent(
        protocol_server.url,
        protocol_server.root,
        "--operations",
        "pdf.index.text/v1",
        "--max-jobs",
        "1",
        name="indexer",
    ) as agent:
        agent.wait(timeout=120)

    job = ProcessingJob.objects.get(pk=job_id)
    assert job.state == JobState.SUCCEEDED, (job.failure_code, job.failure_message)
    status, _, body = http.request("GET", f"/v1/projects/{project.pk}/library/search?q=puffins")
    hits = json.loads(body)["hits"]
    assert [(hit["title"], hit["page"], hit["version_id"]) for hit in hits] == [
        ("Seabirds", 2, accepted["version"]["id"]),
    ]
    assert "<mark>Puffins</mark>" in hits[0]["snippet_html"]
