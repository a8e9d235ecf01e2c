"""The library's share of Processing's upkeep, registered when the app is ready (``LibraryConfig.ready``).

A version names its PDF blob by id, without a foreign key: the blob collector and the
checker ask ``versions_blobs_held`` which candidates a version still holds. The
invariant checker (``manage.py processing_check``) runs the three checks below:
every accepted version was handed off to indexing (job and event), search serves the
requested version once it is indexed, and no version lost its PDF bytes.
"""

from datetime import timedelta

from django.db.models import Exists, F, OuterRef

from library.models import LibraryDocument, LibraryPage, LibraryVersion
from library.services.acceptance import ACCEPTED_EVENT
from processing import facade as processing
from processing.facade import Violation


def versions_blobs_held(blob_ids: list[int]) -> set[int]:
    """Which of these processing blobs hold a library version's PDF (they must be kept)."""
    return set(LibraryVersion.objects.filter(pdf_blob_id__in=blob_ids).values_list("pdf_blob_id", flat=True))


def versions_handed_off(*, since: timedelta = timedelta(days=1)) -> list[Violation]:
    """Every accepted library version has its indexing job and its ``document.version.accepted`` event."""
    versions = list(
        LibraryVersion.objects.filter(created_at__gte=processing.db_now() - since).values_list("pk", "index_job_id")
    )
    jobs = set(processing.job_states(job_ids=[job for _, job in versions]))
    announced = processing.outbox_payload_values(kind=ACCEPTED_EVENT, field="version_id")
    found = [Violation("library_version_without_job", f"version {v}") for v, job in versions if job not in jobs]
    return found + [
        Violation("library_version_without_event", f"version {v}") for v, _ in versions if str(v) not in announced
    ]


def search_current() -> list[Violation]:
    """No document serves an older searchable version while its requested version is already indexed."""
    indexed = LibraryPage.objects.filter(version_id=OuterRef("requested_version_id"))
    lagging = (
        LibraryDocument.objects.filter(requested_version__isnull=False)
        .exclude(searchable_version_id=F("requested_version_id"))
        .filter(Exists(indexed))
        .values_list("pk", flat=True)
    )
    return [Violation("library_search_stale", f"document {d}") for d in lagging]


def version_bytes_present() -> list[Violation]:
    """Every library version's PDF blob still exists (the version names it by id, without a foreign key)."""
    versions = list(LibraryVersion.objects.values_list("pk", "pdf_blob_id"))
    present = processing.blobs_present(blob_ids=[blob for _, blob in versions])
    return [Violation("library_version_blob_missing", f"version {v}") for v, blob in versions if blob not in present]


def upkeep_register() -> None:
    processing.blob_keeper_register(versions_blobs_held)
    for check in (versions_handed_off, search_current, version_bytes_present):
        processing.invariant_register(check)
