"""The library's share of Processing's upkeep: PDF bytes are kept while a version holds them and removed after
the grace period when nothing does; the invariant checker finds a version not handed off to indexing, search
lagging its indexed version, and a version whose bytes are gone."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from library.models import LibraryDocument, LibraryVersion
from processing.models import OutboxEvent, ProcessingBlob, ProcessingJob
from processing.upkeep.invariants import check_all
from processing.upkeep.reapers import blobs_collect, retention_apply
from tests.library.conftest import put_pdf
from tests.library.factories import accept, document_at_revision
from tests.library.ingest import index_to_success
from tests.library.pdfs import text_pdf

pytestmark = pytest.mark.django_db

LONG_AGO = timezone.now() - timedelta(days=2)


def _age(table: str, column: str, hours: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {column} = now() - make_interval(hours => %s)", [hours])  # noqa: S608


def test_the_bytes_of_a_refused_replacement_go_only_after_the_grace_period(owner, owner_client, project):
    document = document_at_revision(owner, project, revision=8)
    refused = text_pdf(["a stale replacement"])
    assert put_pdf(owner_client, project, document.pk, refused, revision=7).status_code == 412
    orphan = ProcessingBlob.objects.get(size_bytes=len(refused))

    blobs_collect()
    assert ProcessingBlob.objects.filter(pk=orphan.pk).exists(), "within the grace period"

    _age("processing_processingblob", "touched_at", hours=2)
    blobs_collect()
    assert not ProcessingBlob.objects.filter(pk=orphan.pk).exists()
    assert ProcessingBlob.objects.filter(pk=LibraryVersion.objects.get(document=document).pdf_blob_id).exists()


def test_a_versions_pdf_outlives_its_retired_indexing_job(owner, project):
    accepted = accept(owner, project, text_pdf(["kept"]))
    index_to_success(accepted.job_id, ["kept"])
    version = LibraryVersion.objects.get(pk=accepted.version_id)
    _age("processing_processingjob", "completed_at", hours=24 * 365)
    retention_apply()
    assert not ProcessingJob.objects.filter(pk=accepted.job_id).exists()
    _age("processing_processingblob", "touched_at", hours=2)

    blobs_collect()

    assert ProcessingBlob.objects.filter(pk=version.pdf_blob_id).exists()


def _checks() -> set[str]:
    return {violation.check for violation in check_all(include_outbox=False)}


@pytest.fixture
def indexed_version(owner, project):
    accepted = accept(owner, project, text_pdf(["Lighthouses."]), key="library-1")
    index_to_success(accepted.job_id, ["Lighthouses."])
    OutboxEvent.objects.update(dispatched_at=timezone.now())
    return accepted


def test_an_indexed_library_version_is_healthy(indexed_version):
    assert check_all() == []


def test_a_library_version_without_its_accepted_event_is_found(indexed_version):
    OutboxEvent.objects.filter(kind="document.version.accepted").delete()
    assert "library_version_without_event" in _checks()


def test_a_document_whose_search_lags_its_indexed_requested_version_is_found(indexed_version):
    LibraryDocument.objects.update(searchable_version=None)
    assert "library_search_stale" in _checks()


def test_a_library_pdf_whose_indexing_job_was_retired_is_not_an_orphan(indexed_version):
    ProcessingJob.objects.filter(pk=indexed_version.job_id).delete()
    ProcessingBlob.objects.update(touched_at=LONG_AGO)
    pdf_blob = LibraryVersion.objects.get(pk=indexed_version.version_id).pdf_blob_id

    assert f"blob {pdf_blob}" not in {v.detail for v in check_all(include_outbox=False)}


def test_a_library_version_whose_pdf_bytes_are_gone_is_found(indexed_version):
    LibraryVersion.objects.filter(pk=indexed_version.version_id).update(pdf_blob_id=-1)
    assert "library_version_blob_missing" in _checks()
