"""PDF bytes: kept while a version holds them, removed after the grace period when nothing does."""

import pytest
from django.db import connection

from processing.models import ProcessingBlob, ProcessingJob
from processing.upkeep.reapers import blobs_collect, retention_apply
from tests.processing.library.conftest import put_pdf
from tests.processing.library.factories import accept, document_at_revision
from tests.processing.library.ingest import index_to_success
from tests.processing.library.pdfs import text_pdf
from workspace.models import LibraryVersion

pytestmark = pytest.mark.django_db


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
