"""Writes to the library's documents, versions and index entries (seed 002).

Each joins its caller's transaction and performs no I/O: acceptance
(``library.services.acceptance``) holds one transaction across the version, the
indexing job and the outbox event; the indexing finalizer
(``library.services.indexing``) writes inside Processing's finalization
transaction.
"""

import uuid
from dataclasses import dataclass

from django.db import connection, transaction

from library.exceptions import LibraryDocumentNotFound
from library.models import LibraryDocument, LibraryVersion
from library.search import search_config
from library.selectors import VersionSummary, version_summary
from workspace import facade as workspace

MAX_TITLE_LENGTH = 200
# Index text is stored as given, less what PostgreSQL text cannot hold (NUL) and the two
# control characters search uses to mark highlights in snippets.
_UNINDEXABLE = str.maketrans({"\x00": " ", "\x02": " ", "\x03": " "})
MAX_PAGE_CHARS = 100_000  # keeps every page's tsvector far below PostgreSQL's 1 MB limit


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
    """A title on one line, without characters that do not print (NUL, bidi overrides, zero-width ones):
    metadata, so they are dropped rather than refused (foundation/text_rules.py)."""
    printable = "".join(char if char.isprintable() else " " * char.isspace() for char in title or "")
    cleaned = " ".join(printable.split())[:MAX_TITLE_LENGTH]
    return cleaned or None


# --- acceptance steps: each joins the caller's transaction --------------------------------------------


def document_open(*, project_id: uuid.UUID, title: str, created_by_id: int) -> uuid.UUID:
    """Insert a new document at revision 0; its first version is accepted like any replacement."""
    if workspace.project_describe(project_id=project_id) is None:
        raise LibraryDocumentNotFound()
    document = LibraryDocument.objects.create(project_id=project_id, title=title, created_by_id=created_by_id)
    return document.pk


def version_insert(*, document_id: uuid.UUID, number: int, new: NewVersion) -> VersionSummary:
    version = LibraryVersion.objects.create(
        document_id=document_id,
        number=number,
        pdf_blob_id=new.pdf_blob_id,
        sha256=new.sha256,
        size_bytes=new.size_bytes,
        page_count=new.page_count,
        filename=new.filename,
        uploaded_by_id=new.uploaded_by_id,
        index_job_id=new.index_job_id,
    )
    return version_summary(version)


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
    params = {
        "version": version_id,
        "title": title,
        "document": document_id,
        "project": project_id,
        "expected": expected_revision,
    }
    with connection.cursor() as cursor:
        cursor.execute(_REQUEST_ADVANCE_SQL, params)
        rows = cursor.fetchall()
    if len(rows) > 1:
        raise RuntimeError("the conditional update matched more than one document")
    return rows[0][0] if rows else None


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
        params = {
            "document": version.document_id,
            "version": version_id,
            "config": search_config(),
            "numbers": numbers,
            "texts": texts,
        }
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
