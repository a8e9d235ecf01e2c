"""What other contexts (and operators' scripts) may ask the Library. Keyword-only, ids in, frozen values out.

Nothing below the Library (Access, Workspace, Collaboration, Processing) imports it: it reaches them
through their facades and registers its tab, finalizer and upkeep hooks with them when it is ready.
"""

import uuid

from library.exceptions import LibraryDocumentNotFound, RevisionMismatch, SearchQueryInvalid
from library.search import SearchHit
from library.search import library_search as _library_search
from library.services.acceptance import Accepted, VersionUpload, library_version_accept

__all__ = [
    "Accepted",
    "LibraryDocumentNotFound",
    "RevisionMismatch",
    "SearchHit",
    "SearchQueryInvalid",
    "VersionUpload",
    "library_search",
    "version_accept",
]


def version_accept(*, actor_id: int, idempotency_key: str | None, upload: VersionUpload) -> Accepted:
    """Accept a PDF version in one transaction with its indexing job and event (see ``services.acceptance``)."""
    return library_version_accept(actor_id=actor_id, idempotency_key=idempotency_key, upload=upload)


def library_search(*, project_id: uuid.UUID, query: str, limit: int = 20) -> list[SearchHit]:
    """Hits among the current searchable versions of a project's documents. Callers authorize first."""
    return _library_search(project_id=project_id, query=query, limit=limit)
