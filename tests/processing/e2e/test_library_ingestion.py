"""A PDF through the whole path: HTTP upload → the real agent over HTTP → the finalizer → HTTP search.

The agent is Quire's own ``WorkerAgent`` with its HTTP protocol client, run on a thread
here with the tests' plain-subprocess executor: the bubblewrap executor the command line
uses belongs to the sandbox work and is not part of this checkout yet.
"""

import json
import threading

import pytest

from processing.models import JobState, ProcessingJob
from processing.worker.agent import AgentSettings, WorkerAgent
from processing.worker.client import HttpCoreClient
from processing.worker.processors.pdf_text import PdfTextProcessor
from tests.factories import ProjectFactory, bearer_token_for
from tests.processing.e2e.conftest import RawHttp
from tests.processing.factories import WORKER_TOKEN
from tests.processing.library.pdfs import text_pdf
from tests.processing.worker.executors import SubprocessTestExecutor

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_uploaded_pdf_is_indexed_by_a_real_agent_and_found_by_search(owner, protocol_server):
    project = ProjectFactory(owner=owner)
    http = RawHttp(protocol_server["url"], bearer_token_for(owner))
    pdf = text_pdf(["Kittiwakes nest on narrow ledges.", "Puffins prefer burrows."], title="Seabirds")

    status, _, body = http.request(
        "POST", f"/v1/projects/{project.pk}/library?filename=seabirds.pdf", body=pdf,
        headers={"Content-Type": "application/pdf", "Idempotency-Key": "e2e-upload"},
    )  # fmt: skip
    assert status == 202, body
    accepted = json.loads(body)
    job_id = accepted["job"]["id"]

    agent = WorkerAgent(
        client=HttpCoreClient(protocol_server["url"], WORKER_TOKEN), processors=[PdfTextProcessor()],
        executor=SubprocessTestExecutor(),
        settings=AgentSettings(instance="indexer", work_root=protocol_server["root"] / "indexer", max_jobs=1,
                               acquire_wait_seconds=5),
    )  # fmt: skip
    thread = threading.Thread(target=agent.run)
    thread.start()
    thread.join(120)
    assert not thread.is_alive(), "the agent did not finish its one job"

    job = ProcessingJob.objects.get(pk=job_id)
    assert job.state == JobState.SUCCEEDED, (job.failure_code, job.failure_message)
    status, _, body = http.request("GET", f"/v1/projects/{project.pk}/library/search?q=puffins")
    hits = json.loads(body)["hits"]
    assert [(hit["title"], hit["page"], hit["version_id"]) for hit in hits] == [
        ("Seabirds", 2, accepted["version"]["id"]),
    ]  # fmt: skip
    assert "<mark>Puffins</mark>" in hits[0]["snippet_html"]
