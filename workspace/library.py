"""The PDF library's documents, versions and index entries (seed 002; architecture §9).

Workspace owns these rows; Processing owns the job and the outbox and calls
these functions inside its own acceptance and finalization transactions, so
every write here joins the caller's transaction and performs no I/O.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef

from workspace.exceptions import LibraryDocumentNotFound
from workspace.models import LibraryDocument, LibraryPage, LibraryVersion, Project

MAX_TITLE_LENGTH = 200
# Index text is stored as given, less what PostgreSQL text cannot hold (NUL) and the two
# control characters search uses to mark highlights in snippets.
_UNINDEXABLE = str.maketrans({"\x00": " ", "\x02": " ", "\x03": " "})
MAX_PAGE_CHARS = 100_000  # keeps every page's tsvector far below PostgreSQL's 1 MB limit


@dataclass(frozen=True)
class VersionSummary:
    id: uuid.UUID
    document_id: uuid.UUID
    number: int
    sha256: str
    size_bytes: int
    page_count: int
    filename: str
    uploaded_by_id: int
    index_job_id: uuid.UUID
    pdf_blob_id: int
    created_at: datetime


@dataclass(frozen=True)
class DocumentSummary:
    id: uuid.UUID
    project_id: uuid.UUID
    title: str
    revision: int
    requested_version_id: uuid.UUID | None
    searchable_version_id: uuid.UUID | None
    created_at: datetime
    updated_at: datetime
    versions: tuple[VersionSummary, ...]


@dataclass(frozen=True)
class NewVersion:
    """What acceptance knows about a version before it inserts it."""

    pdf_blob_id: int
    sha256: str
    size_bytes: int
    page_count: int
    filename: str
    uploaded_by_id: int
    index_job_id: uuid.UUID


def title_clean(title: str | None) -> str | None:
    cleaned = " ".join((title or "").split())[:MAX_TITLE_LENGTH]
    return cleaned or None


def search_config() -> str:
    return settings.LIBRARY_SEARCH_CONFIG


def _version_summary(version: LibraryVersion) -> VersionSummary:
    return VersionSummary(
        version.pk, version.document_id, version.number, version.sha256, version.size_bytes, version.page_count,
        version.filename, version.uploaded_by_id, version.index_job_id, version.pdf_blob_id, version.created_at,
    )  # fmt: skip


def _document_summary(document: LibraryDocument, versions: list[LibraryVersion]) -> DocumentSummary:
    return DocumentSummary(
        document.pk, document.project_id, document.title, document.revision, document.requested_version_id,
        document.searchable_version_id, document.created_at, document.updated_at,
        tuple(_version_summary(version) for version in versions),
    )  # fmt: skip


# --- acceptance steps: each joins the caller's transaction --------------------------------------------


def document_open(*, project_id: uuid.UUID, title: str, created_by_id: int) -> uuid.UUID:
    """Insert a new document at revision 0; its first version is accepted like any replacement."""
    if not Project.objects.filter(pk=project_id).exists():
        raise LibraryDocumentNotFound()
    document = LibraryDocument.objects.create(project_id=project_id, title=title, created_by_id=created_by_id)
    return document.pk


def version_insert(*, document_id: uuid.UUID, number: int, new: NewVersion) -> VersionSummary:
    version = LibraryVersion.objects.create(
        document_id=document_id, number=number, pdf_blob_id=new.pdf_blob_id, sha256=new.sha256,
        size_bytes=new.size_bytes, page_count=new.page_count, filename=new.filename,
        uploaded_by_id=new.uploaded_by_id, index_job_id=new.index_job_id,
    )  # fmt: skip
    return _version_summary(version)


_REQUEST_ADVANCE_SQL = """
    UPDATE workspace_librarydocument
    SET requested_version_id = %(version)s, revision = revision + 1, updated_at = now(),
        title = coalesce(%(title)s, title)
    WHERE id = %(document)s AND project_id = %(project)s AND revision = %(expected)s
    RETURNING revision
"""


def request_advance(
    *, project_id: uuid.UUID, document_id: uuid.UUID, version_id: uuid.UUID, expected_revision: int, title: str | None
) -> int | None:
    """Make ``version_id`` the requested version if the document is still at ``expected_revision``.

    Returns the new revision, or None when no row matched (stale revision or no
    such document): the caller must then roll back everything it wrote. Under
    Read Committed a contender waits for the row, then rechecks the condition.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("a version is accepted inside the acceptance transaction")
    params = {"version": version_id, "title": title, "document": document_id, "project": project_id,
              "expected": expected_revision}  # fmt: skip
    with connection.cursor() as cursor:
        cursor.execute(_REQUEST_ADVANCE_SQL, params)
        rows = cursor.fetchall()
    if len(rows) > 1:
        raise RuntimeError("the conditional update matched more than one document")
    return rows[0][0] if rows else None


# --- reads ---------------------------------------------------------------------------------------------


def document_revision(*, project_id: uuid.UUID, document_id: uuid.UUID) -> int | None:
    return (
        LibraryDocument.objects.filter(pk=document_id, project_id=project_id).values_list("revision", flat=True).first()
    )


def document_describe(*, project_id: uuid.UUID, document_id: uuid.UUID) -> DocumentSummary:
    """The document with its versions, newest first (raises LibraryDocumentNotFound)."""
    document = LibraryDocument.objects.filter(pk=document_id, project_id=project_id).first()
    if document is None:
        raise LibraryDocumentNotFound(details={"document_id": str(document_id)})
    versions = list(LibraryVersion.objects.filter(document=document).order_by("-number"))
    return _document_summary(document, versions)


def documents_of(*, project_id: uuid.UUID) -> list[DocumentSummary]:
    documents = list(
        LibraryDocument.objects.filter(project_id=project_id, revision__gt=0).order_by("-created_at", "pk")
    )
    by_document: dict[uuid.UUID, list[LibraryVersion]] = {document.pk: [] for document in documents}
    for version in LibraryVersion.objects.filter(document_id__in=list(by_document)).order_by("-number"):
        by_document[version.document_id].append(version)
    return [_document_summary(document, by_document[document.pk]) for document in documents]


def version_of_job(*, job_id: uuid.UUID) -> VersionSummary | None:
    version = LibraryVersion.objects.filter(index_job_id=job_id).first()
    return _version_summary(version) if version else None


def blob_ids_in_use(*, blob_ids: list[int]) -> set[int]:
    """Which of these processing blobs hold a library version's PDF (they must be kept)."""
    return set(LibraryVersion.objects.filter(pdf_blob_id__in=blob_ids).values_list("pdf_blob_id", flat=True))


# --- ingestion: joins the finalization transaction -----------------------------------------------------

_PAGES_UPSERT_SQL = """
    INSERT INTO workspace_librarypage (document_id, version_id, page_number, text, search_vector)
    SELECT %(document)s, %(version)s, page.number, page.text, to_tsvector(%(config)s::regconfig, page.text)
    FROM unnest(%(numbers)s::integer[], %(texts)s::text[]) AS page(number, text)
    ON CONFLICT (version_id, page_number) DO UPDATE
    SET text = EXCLUDED.text, search_vector = EXCLUDED.search_vector
    WHERE workspace_librarypage.text IS DISTINCT FROM EXCLUDED.text
       OR workspace_librarypage.search_vector IS DISTINCT FROM EXCLUDED.search_vector
"""


def pages_index(*, version_id: uuid.UUID, pages: list[tuple[int, str]]) -> int:
    """Write the version's index entries keyed by (version, page): running it again changes nothing."""
    version = LibraryVersion.objects.get(pk=version_id)
    numbers = [number for number, _ in pages]
    texts = [text.translate(_UNINDEXABLE)[:MAX_PAGE_CHARS] for _, text in pages]
    with connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM workspace_librarypage WHERE version_id = %s AND NOT (page_number = ANY(%s))",
            [version_id, numbers],
        )
        params = {"document": version.document_id, "version": version_id, "config": search_config(),
                  "numbers": numbers, "texts": texts}  # fmt: skip
        cursor.execute(_PAGES_UPSERT_SQL, params)
    return len(pages)


_SEARCHABLE_ADVANCE_SQL = """
    UPDATE workspace_librarydocument SET searchable_version_id = %(version)s, updated_at = now()
    WHERE id = %(document)s AND requested_version_id = %(version)s
      AND searchable_version_id IS DISTINCT FROM %(version)s
    RETURNING id
"""


def searchable_advance(*, document_id: uuid.UUID, version_id: uuid.UUID) -> bool:
    """Make the version searchable only if it is still the requested one; True when this call moved it."""
    with connection.cursor() as cursor:
        cursor.execute(_SEARCHABLE_ADVANCE_SQL, {"document": document_id, "version": version_id})
        return cursor.fetchone() is not None


def versions_since(*, since) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """(version id, indexing job id) of versions accepted since ``since``: for the invariant checker."""
    return list(LibraryVersion.objects.filter(created_at__gte=since).values_list("pk", "index_job_id"))


def version_blobs() -> list[tuple[uuid.UUID, int]]:
    """(version id, PDF blob id) of every version: for the invariant checker."""
    return list(LibraryVersion.objects.values_list("pk", "pdf_blob_id"))


def documents_with_lagging_search() -> list[uuid.UUID]:
    """Documents whose requested version is indexed yet another (older) version is the searchable one."""
    indexed = LibraryPage.objects.filter(version_id=OuterRef("requested_version_id"))
    return list(
        LibraryDocument.objects.filter(requested_version__isnull=False)
        .exclude(searchable_version_id=F("requested_version_id"))
        .filter(Exists(indexed))
        .values_list("pk", flat=True)
    )
