"""Reads of the PDF library: documents and versions as frozen values, and the authorized views of them the API
and the Library tab show (composed with the indexing jobs' states, asked of Processing)."""

import uuid
from dataclasses import dataclass
from datetime import datetime

from access import facade as access
from library.exceptions import LibraryDocumentNotFound
from library.models import LibraryDocument, LibraryVersion
from library.search import library_search
from processing import facade as processing


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


def version_summary(version: LibraryVersion) -> VersionSummary:
    return VersionSummary(
        version.pk,
        version.document_id,
        version.number,
        version.sha256,
        version.size_bytes,
        version.page_count,
        version.filename,
        version.uploaded_by_id,
        version.index_job_id,
        version.pdf_blob_id,
        version.created_at,
    )


def _document_summary(document: LibraryDocument, versions: list[LibraryVersion]) -> DocumentSummary:
    return DocumentSummary(
        document.pk,
        document.project_id,
        document.title,
        document.revision,
        document.requested_version_id,
        document.searchable_version_id,
        document.created_at,
        document.updated_at,
        tuple(version_summary(version) for version in versions),
    )


# --- unauthorized reads: callers authorized first, or are the library's own services -------------------


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
    return version_summary(version) if version else None


# --- authorized views for the API and the Library tab ---------------------------------------------------


@dataclass(frozen=True)
class LibraryDocumentView:
    document: DocumentSummary
    job_states: dict[uuid.UUID, str]

    def version_status(self, version) -> str:
        """searchable | indexing | failed | superseded, for people reading the version history."""
        if version.id == self.document.searchable_version_id:
            return "searchable"
        if version.id != self.document.requested_version_id:
            return "superseded"
        return "indexing" if self.job_states.get(version.index_job_id) in processing.ACTIVE_STATES else "failed"


def _views(documents: list[DocumentSummary]) -> list[LibraryDocumentView]:
    job_ids = [version.index_job_id for document in documents for version in document.versions]
    states = processing.job_states(job_ids=job_ids)
    return [LibraryDocumentView(document, states) for document in documents]


def library_documents_for(*, user_id: int, project_id: uuid.UUID) -> list[LibraryDocumentView]:
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    return _views(documents_of(project_id=project_id))


def library_document_for(*, user_id: int, project_id: uuid.UUID, document_id: uuid.UUID) -> LibraryDocumentView:
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    return _views([document_describe(project_id=project_id, document_id=document_id)])[0]


@dataclass(frozen=True)
class VersionPdf:
    version_id: uuid.UUID
    number: int
    filename: str
    pdf_blob_id: int  # Processing's blob: the bytes are streamed from it, never read whole
    size_bytes: int


def library_version_pdf_for(
    *, user_id: int, project_id: uuid.UUID, document_id: uuid.UUID, version_id: uuid.UUID | None
) -> VersionPdf:
    """A version's PDF bytes (the latest accepted version's when ``version_id`` is None), authorized for
    the caller now; ``LibraryDocumentNotFound`` for a version that is not this document's."""
    document = library_document_for(user_id=user_id, project_id=project_id, document_id=document_id).document
    wanted = version_id or document.requested_version_id
    version = next((version for version in document.versions if version.id == wanted), None)
    if version is None:
        raise LibraryDocumentNotFound("No such version of this document.")
    return VersionPdf(version.id, version.number, version.filename, version.pdf_blob_id, version.size_bytes)


def library_search_for(*, user_id: int, project_id: uuid.UUID, query: str | None, limit: int = 20) -> list:
    """Hits from current searchable versions; 404 for a project the user cannot see, 400 for a bad query."""
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    return library_search(project_id=project_id, query=query or "", limit=limit)
