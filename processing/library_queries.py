"""Reads of the PDF library for the API and the Library tab: authorized, composed with job states."""

import uuid
from dataclasses import dataclass

from access import facade as access
from processing.models import ProcessingJob
from processing.models.jobs import ACTIVE_STATES
from workspace import facade as workspace


@dataclass(frozen=True)
class LibraryDocumentView:
    document: workspace.LibraryDocumentSummary
    job_states: dict[uuid.UUID, str]

    def version_status(self, version) -> str:
        """searchable | indexing | failed | superseded, for people reading the version history."""
        if version.id == self.document.searchable_version_id:
            return "searchable"
        if version.id != self.document.requested_version_id:
            return "superseded"
        return "indexing" if self.job_states.get(version.index_job_id) in ACTIVE_STATES else "failed"


def _views(documents: list) -> list[LibraryDocumentView]:
    job_ids = [version.index_job_id for document in documents for version in document.versions]
    states = dict(ProcessingJob.objects.filter(pk__in=job_ids).values_list("pk", "state"))
    return [LibraryDocumentView(document, states) for document in documents]


def library_documents_for(*, user_id: int, project_id: uuid.UUID) -> list[LibraryDocumentView]:
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    return _views(workspace.library_documents_of(project_id=project_id))


def library_document_for(*, user_id: int, project_id: uuid.UUID, document_id: uuid.UUID) -> LibraryDocumentView:
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    return _views([workspace.library_document_describe(project_id=project_id, document_id=document_id)])[0]


@dataclass(frozen=True)
class VersionPdf:
    version_id: uuid.UUID
    number: int
    filename: str
    data: bytes


def library_version_pdf_for(
    *, user_id: int, project_id: uuid.UUID, document_id: uuid.UUID, version_id: uuid.UUID | None
) -> VersionPdf:
    """A version's PDF bytes (the latest accepted version's when ``version_id`` is None), authorized for
    the caller now; ``LibraryDocumentNotFound`` for a version that is not this document's."""
    from processing.blobs import blob_read

    document = library_document_for(user_id=user_id, project_id=project_id, document_id=document_id).document
    wanted = version_id or document.requested_version_id
    version = next((version for version in document.versions if version.id == wanted), None)
    if version is None:
        raise workspace.LibraryDocumentNotFound("No such version of this document.")
    return VersionPdf(version.id, version.number, version.filename, blob_read(version.pdf_blob_id))


def library_search_for(*, user_id: int, project_id: uuid.UUID, query: str | None, limit: int = 20) -> list:
    """Hits from current searchable versions; 404 for a project the user cannot see, 400 for a bad query."""
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    return workspace.library_search(project_id=project_id, query=query or "", limit=limit)
