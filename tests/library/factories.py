"""Library documents made through the real acceptance service."""

import itertools

from library.models import LibraryDocument
from library.services.acceptance import VersionUpload, library_version_accept
from tests.library.pdfs import text_pdf

_keys = itertools.count(1)


def accept(owner, project, data: bytes, *, document_id=None, revision=None, key=None, title=None, filename="a.pdf"):
    upload = VersionUpload(project.pk, document_id, revision, data, filename, title)
    return library_version_accept(actor_id=owner.pk, idempotency_key=key or f"factory-{next(_keys)}", upload=upload)


def document_at_revision(owner, project, *, revision: int, text: str = "first words") -> LibraryDocument:
    """A document whose history we skip: accepted and indexed once, then moved to ``revision`` directly."""
    from tests.library.ingest import index_to_success

    accepted = accept(owner, project, text_pdf([text]))
    index_to_success(accepted.job_id, [text])
    LibraryDocument.objects.filter(pk=accepted.document_id).update(revision=revision)
    return LibraryDocument.objects.get(pk=accepted.document_id)
