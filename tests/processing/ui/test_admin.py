"""The operators' admin: read-only history, and actions that go through the services."""

import re
from urllib.parse import quote

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from processing.models import (
    FailureClass,
    IdempotencyReservation,
    JobState,
    OutboxEvent,
    ProcessingArtifact,
    ProcessingAttempt,
    ProcessingBlob,
    ProcessingJob,
    WorkerSession,
)
from processing.operations import REGISTRY
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, delivery_accept
from tests.factories import UserFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import build_to_success, pdf_bytes, stage
from workspace.services import file_write

pytestmark = pytest.mark.django_db

LATEX = "latex.compile.pdf/v1"
JOBS = "/admin/processing/processingjob/"
STARTER_EDITED = b"\\documentclass{article}\\begin{document}Edited.\\end{document}\n"


@pytest.fixture
def operator():
    client = Client()
    client.force_login(UserFactory(username="operator", is_staff=True, is_superuser=True))
    return client


def _act(operator, action: str, *jobs):
    selected = [str(job.pk) for job in jobs]
    return operator.post(JOBS, {"action": action, "_selected_action": selected, "confirmed": "1"}, follow=True)


def _running(owner_client, project, key) -> ProcessingJob:
    job_id = submit_build(owner_client, project, key=key).json()["id"]
    claim = claim_acquire(session_id=WorkerSessionFactory(processors={LATEX: 1}).pk, offers={LATEX: 1})
    assert str(claim.job_id) == job_id
    return ProcessingJob.objects.get(pk=job_id)


def test_cancel_from_admin_follows_the_apis_rules(operator, owner_client, project):
    running = _running(owner_client, project, "running")
    finalizing = _running(owner_client, project, "finalizing")
    attempt = finalizing.attempts.get()
    stage(attempt, "pdf", "application/pdf", "main.pdf", pdf_bytes())
    delivery_accept(claim_id=attempt.claim_id, diagnostics=Diagnostics())
    queued_build = ProcessingJob.objects.get(pk=submit_build(owner_client, project, key="queued").json()["id"])

    response = _act(operator, "cancel_jobs", queued_build, running, finalizing)

    assert ProcessingJob.objects.get(pk=queued_build.pk).state == JobState.CANCELLED
    running = ProcessingJob.objects.get(pk=running.pk)
    assert running.state == JobState.RUNNING and running.cancellation_requested  # the worker is asked to stop
    assert ProcessingJob.objects.get(pk=finalizing.pk).state == JobState.FINALIZING  # no longer cancellable
    assert "1 cancelled, 1 left finalizing, 1 running, asked to stop" in response.content.decode()


def test_retry_from_admin_creates_a_linked_job_and_leaves_the_failed_one(operator, owner, limit_failed_build):
    failed_build = limit_failed_build
    response = _act(operator, "retry_jobs", failed_build)

    retry = ProcessingJob.objects.get(retry_of_id=failed_build.pk)
    assert (retry.state, retry.requester_id, retry.operation) == (JobState.QUEUED, owner.pk, failed_build.operation)
    assert retry.input_blob_id == failed_build.input_blob_id and retry.options == failed_build.options
    again = ProcessingJob.objects.get(pk=failed_build.pk)
    assert again.state == JobState.FAILED and again.completed_at == failed_build.completed_at
    assert "Retried:" in response.content.decode()


def test_retry_from_admin_refuses_jobs_that_did_not_fail(operator, queued_build):
    response = _act(operator, "retry_jobs", queued_build)

    assert "Only a failed job" in response.content.decode()
    assert not ProcessingJob.objects.filter(retry_of_id=queued_build.pk).exists()


def test_a_staff_member_without_permissions_gets_no_actions(queued_build):
    client = Client()
    client.force_login(UserFactory(is_staff=True))

    assert client.get(JOBS).status_code == 403
    assert ProcessingJob.objects.get(pk=queued_build.pk).state == JobState.QUEUED


def test_jobs_are_read_only(operator, queued_build):
    page = operator.get(f"{JOBS}{queued_build.pk}/change/").content.decode()

    assert operator.get(f"{JOBS}add/").status_code == 403
    assert 'name="_save"' not in page and "Processing attempts" in page


def test_the_job_list_shows_names_and_filters(operator, owner, owner_client, project, failed_build):
    queued_build = ProcessingJob.objects.get(pk=submit_build(owner_client, project, key="later").json()["id"])
    page = operator.get(JOBS).content.decode()
    assert owner.username in page and project.name in page

    failed = operator.get(JOBS, {"state__exact": "failed", "failure_class__exact": "processor_rejected"})
    assert str(failed_build.pk)[:8] in failed.content.decode()
    assert str(queued_build.pk)[:8] not in failed.content.decode()


@pytest.mark.parametrize(
    ("page", "offered"),
    [
        (JOBS, (*REGISTRY, *FailureClass.values)),
        ("/admin/processing/processingattempt/", (*REGISTRY, *FailureClass.values)),
        ("/admin/processing/processingartifact/", ("pdf", "log", "application/pdf", "text/plain")),
    ],
)
def test_the_lists_offer_the_known_values_without_reading_every_row(operator, page, offered):
    """Django's default filter for a field without choices is a SELECT DISTINCT over the whole table on every
    page; with a million jobs that alone took the filtered list past its budget."""
    with CaptureQueriesContext(connection) as queries:
        listed = operator.get(page).content.decode()

    assert not [query["sql"] for query in queries if "DISTINCT" in query["sql"].upper()]
    for value in offered:
        assert f"={quote(value, safe='')}" in listed, f"the filter offers {value}"


def test_a_jobs_page_shows_a_failure_only_for_a_job_that_failed(operator, owner_client, project, failed_build):
    succeeded = build_to_success(submit_build(owner_client, project, key="fine").json()["id"])

    failed_page = operator.get(f"{JOBS}{failed_build.pk}/change/").content.decode()
    succeeded_page = operator.get(f"{JOBS}{succeeded.pk}/change/").content.decode()

    assert ">Failure<" in failed_page and failed_build.failure_code in failed_page
    assert ">Failure<" not in succeeded_page and ">Timeline<" in succeeded_page


@pytest.mark.parametrize("term", ["requester", "project", "id-prefix", "id"])
def test_search_by_id_requester_or_project(operator, owner, project, queued_build, term):
    other = UserFactory()
    text = {
        "requester": owner.username,
        "project": project.name,
        "id-prefix": str(queued_build.pk)[:8],
        "id": str(queued_build.pk),
    }[term]

    page = operator.get(JOBS, {"q": text}).content.decode()
    nothing = operator.get(JOBS, {"q": other.username}).content.decode()

    assert str(queued_build.pk)[:8] in page and str(queued_build.pk)[:8] not in nothing


def test_the_other_admin_pages_render(operator, owner_client, project):
    job = build_to_success(submit_build(owner_client, project).json()["id"])
    objects = {
        "processingattempt": ProcessingAttempt.objects.get(job=job),
        "processingartifact": ProcessingArtifact.objects.filter(job=job).first(),
        "processingblob": ProcessingBlob.objects.first(),
        "workersession": WorkerSession.objects.first(),
        "outboxevent": OutboxEvent.objects.first(),
        "idempotencyreservation": IdempotencyReservation.objects.first(),
        "processingjob": job,
    }
    for model, instance in objects.items():
        assert operator.get(f"/admin/processing/{model}/").status_code == 200, model
        assert operator.get(f"/admin/processing/{model}/{instance.pk}/change/").status_code == 200, model


def _blob_row_counts(page: str, sha256: str) -> tuple[int, int, int]:
    """(job inputs, artifacts, staged outputs) shown in the blob list's row for ``sha256``."""
    rows = [row for row in re.findall(r"<tr.*?</tr>", page, flags=re.DOTALL) if sha256[:16] in row]
    assert len(rows) == 1, sha256
    cells = dict(re.findall(r'<td class="field-(as_input|as_artifact|as_staged)">(\d+)</td>', rows[0]))
    return int(cells["as_input"]), int(cells["as_artifact"]), int(cells["as_staged"])


def test_the_blob_list_counts_references(operator, owner, owner_client, project):
    pdf = pdf_bytes()  # both builds deliver the same PDF: one blob, two artifacts
    first = build_to_success(submit_build(owner_client, project, key="first").json()["id"], pdf=pdf)
    file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=STARTER_EDITED)
    second = build_to_success(submit_build(owner_client, project, key="second").json()["id"], pdf=pdf)
    shared_pdf = ProcessingArtifact.objects.get(job=first, role="pdf").blob

    page = operator.get("/admin/processing/processingblob/").content.decode()

    assert _blob_row_counts(page, first.input_blob.sha256) == (1, 0, 0)
    assert _blob_row_counts(page, second.input_blob.sha256) == (1, 0, 0)
    # Each delivery's staged row stays until maintenance drops it after the staging grace period.
    assert _blob_row_counts(page, shared_pdf.sha256) == (0, 2, 2)


def test_the_overview_shows_queue_sessions_failures_and_lease_losses(operator, queued_build, failed_build):
    page = operator.get(f"{JOBS}overview/").content.decode()

    assert "Queue per operation" in page and LATEX in page
    assert "processor_rejected" in page
    assert "Lease losses, last 24 hours" in page and "Worker fleet" in page
