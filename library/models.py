"""The PDF library's documents, versions and index entries (seed 002).

The tables keep the names they had when Workspace owned these models (``db_table``): the move
to this app changed Django's state only.
"""

import uuid

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import Q


class LibraryDocument(models.Model):
    """A PDF in a project's library. ``revision`` counts accepted versions; it is the document's ETag.

    A new document is inserted at revision 0 and accepted through the same
    conditional update as a replacement, so every accepted version moves the
    revision by exactly one.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey("workspace.Project", on_delete=models.CASCADE, related_name="library_documents")
    title = models.CharField(max_length=200)
    revision = models.IntegerField(default=0)
    requested_version = models.ForeignKey(
        "LibraryVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    searchable_version = models.ForeignKey(
        "LibraryVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by_id = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "workspace_librarydocument"
        constraints = [models.CheckConstraint(condition=Q(revision__gte=0), name="library_revision_nonnegative")]
        indexes = [models.Index(fields=["project", "-created_at"], name="library_by_project")]

    def __str__(self) -> str:
        return f"{self.title} r{self.revision}"


class LibraryVersion(models.Model):
    """One immutable PDF version. Its bytes were stored (a processing blob) before it was accepted.

    ``number`` is the document revision its acceptance produced. It is unique per
    document by the acceptance protocol, not by an index: the conditional revision
    update is the gate. A unique index would make a stale contender's INSERT meet
    the winner's before the gate decides — blocking on it, or (deferred) deadlocking
    the winner's commit-time recheck against the loser waiting at the document row.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    document = models.ForeignKey(LibraryDocument, on_delete=models.CASCADE, related_name="versions")
    number = models.IntegerField()
    pdf_blob_id = models.BigIntegerField(help_text="Processing blob holding the PDF bytes.")
    sha256 = models.CharField(max_length=64)
    size_bytes = models.BigIntegerField()
    page_count = models.IntegerField()
    filename = models.CharField(max_length=255, blank=True, default="")
    uploaded_by_id = models.IntegerField()
    index_job_id = models.UUIDField(unique=True, help_text="The pdf.index.text/v1 job accepted with this version.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "workspace_libraryversion"
        constraints = [
            models.CheckConstraint(condition=Q(number__gte=1), name="library_version_number_positive"),
            models.CheckConstraint(condition=Q(size_bytes__gte=0), name="library_version_size_nonnegative"),
        ]
        indexes = [
            models.Index(fields=["pdf_blob_id"], name="library_version_by_blob"),
            models.Index(fields=["document", "-number"], name="library_version_by_document"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id} v{self.number}"


class LibraryPage(models.Model):
    """An index entry: one page's text of one version, keyed by (version, page). Rewriting it changes nothing."""

    document = models.ForeignKey(LibraryDocument, on_delete=models.CASCADE, related_name="+")
    version = models.ForeignKey(LibraryVersion, on_delete=models.CASCADE, related_name="pages")
    page_number = models.IntegerField()
    text = models.TextField()
    search_vector = SearchVectorField()

    class Meta:
        db_table = "workspace_librarypage"
        constraints = [
            models.UniqueConstraint(fields=["version", "page_number"], name="library_page_unique_in_version"),
            models.CheckConstraint(condition=Q(page_number__gte=1), name="library_page_number_positive"),
        ]
        indexes = [GinIndex(fields=["search_vector"], name="library_page_search")]

    def __str__(self) -> str:
        return f"{self.version_id} p{self.page_number}"
