"""Ingestion: the finalizer's idempotent index entries and its rule that an obsolete version never wins."""

import pytest

from library.models import LibraryDocument, LibraryPage
from library.search import library_search
from library.services.indexing import index_library_version
from processing.models import JobState, OutboxEvent, ProcessingJob, StagedOutput
from tests.library.factories import accept, document_at_revision
from tests.library.ingest import index_claim, index_finish, index_to_success
from tests.library.pdfs import text_pdf

pytestmark = pytest.mark.django_db


def _searched(project, query) -> list[tuple[str, int]]:
    return [(str(hit.version_id), hit.page_number) for hit in library_search(project_id=project.pk, query=query)]


def test_an_indexed_version_becomes_searchable_and_says_so(owner, project):
    accepted = accept(owner, project, text_pdf(["lighthouse keeper", "harbour master"]))

    job = index_to_success(accepted.job_id, ["lighthouse keeper", "harbour master"])

    assert job.state == JobState.SUCCEEDED
    assert list(job.artifacts.values_list("role", flat=True)) == ["pages"]
    document = LibraryDocument.objects.get(pk=accepted.document_id)
    assert document.searchable_version_id == accepted.version_id
    assert _searched(project, "harbour") == [(str(accepted.version_id), 2)]
    event = OutboxEvent.objects.get(kind="document.version.searchable")
    assert event.payload["version_id"] == str(accepted.version_id)
    assert OutboxEvent.objects.filter(kind="processing.job.succeeded", payload__job_id=str(job.pk)).exists()


def test_version_8_finishing_after_version_9_never_becomes_searchable(owner, project):
    document = document_at_revision(owner, project, revision=7)
    v8 = accept(owner, project, text_pdf(["eight: albatross"]), document_id=document.pk, revision=7)
    v8_claim = index_claim(v8.job_id)  # 8 is processing …
    v9 = accept(owner, project, text_pdf(["nine: pelican"]), document_id=document.pk, revision=8)
    index_to_success(v9.job_id, ["nine: pelican"])  # … 9 is accepted and finishes first …

    late = index_finish(v8_claim, ["eight: albatross"])  # … and 8 finishes last.

    assert late.state == JobState.SUCCEEDED
    document.refresh_from_db()
    assert (document.requested_version_id, document.searchable_version_id) == (v9.version_id, v9.version_id)
    assert _searched(project, "albatross") == []
    assert _searched(project, "pelican") == [(str(v9.version_id), 1)]
    searchable = OutboxEvent.objects.filter(kind="document.version.searchable").values_list("payload", flat=True)
    became_searchable = {payload["version_id"] for payload in searchable}
    assert str(v9.version_id) in became_searchable and str(v8.version_id) not in became_searchable


def test_running_the_finalizer_twice_leaves_identical_index_rows(owner, project, django_capture_on_commit_callbacks):
    accepted = accept(owner, project, text_pdf(["one", "two"]))
    job = index_to_success(accepted.job_id, ["alpha beta", "gamma delta"])
    rows = list(LibraryPage.objects.order_by("pk").values_list("pk", "page_number", "text", "search_vector"))

    staged = list(StagedOutput.objects.filter(attempt__job=job))
    publication = index_library_version(ProcessingJob.objects.get(pk=job.pk), staged)
    publication.before_publish(job)  # a recovered finalization repeating its publication step

    again = list(LibraryPage.objects.order_by("pk").values_list("pk", "page_number", "text", "search_vector"))
    assert again == rows and len(rows) == 2
    assert OutboxEvent.objects.filter(kind="document.version.searchable").count() == 1


def test_pages_that_are_not_the_schema_fail_the_job_as_a_contract_violation(owner, project):
    from tests.processing.lifecycle import stage

    accepted = accept(owner, project, text_pdf(["one"]))
    claim = index_claim(accepted.job_id)
    stage(claim, "pages", "application/json", "pages.json", b'{"schema": "something-else"}')
    from processing.finalization.finalize import job_finalize
    from processing.queue.delivery import Diagnostics, delivery_accept

    job_id, token = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())
    job_finalize(job_id=job_id, token=token)

    job = ProcessingJob.objects.get(pk=job_id)
    assert (job.state, job.failure_class, job.failure_code) == (
        JobState.FAILED,
        "internal_contract_violation",
        "pages_invalid",
    )
    assert LibraryDocument.objects.get(pk=accepted.document_id).searchable_version_id is None
    assert not LibraryPage.objects.exists()


def test_a_failed_indexing_job_retried_by_its_owner_makes_the_version_searchable(owner, project, configure_deployment):
    from processing.queue.delivery import Diagnostics, attempt_fail
    from processing.submission.manual_retry import job_retry

    configure_deployment()
    accepted = accept(owner, project, text_pdf(["kestrel"]))
    claim = index_claim(accepted.job_id)
    attempt_fail(
        claim_id=claim.claim_id,
        failure_class="resource_limit",
        code="wall_time_exceeded",
        message="It ran past the time limit.",
        diagnostics=Diagnostics(),
    )
    assert ProcessingJob.objects.get(pk=accepted.job_id).state == JobState.FAILED

    retried = job_retry(actor_id=owner.pk, job_id=accepted.job_id)
    job = index_to_success(retried.job_id, ["kestrel"])

    assert job.state == JobState.SUCCEEDED
    assert LibraryDocument.objects.get(pk=accepted.document_id).searchable_version_id == accepted.version_id
    assert _searched(project, "kestrel") == [(str(accepted.version_id), 1)]
