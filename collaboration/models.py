import uuid

from django.db import models
from django.db.models import F, Q


class UpdateOrigin(models.TextChoices):
    CLIENT = "client"
    SERVER = "server"


class DocumentLog(models.Model):
    """The accepted history of one text document, keyed by Workspace's file id (stable across renames).

    ``snapshot`` is the merged Yjs state as of ``snapshot_seq``; loading the
    document reads it plus the updates after it, so cost stays bounded as the log grows.
    """

    project_id = models.UUIDField()
    file_id = models.BigIntegerField(unique=True)
    snapshot = models.BinaryField(default=b"")
    snapshot_seq = models.BigIntegerField(default=0)
    last_seq = models.BigIntegerField(default=0)
    projected_seq = models.BigIntegerField(default=0)
    # The digest Workspace's row had when it last agreed with the log (a projection, or a reconciliation
    # with text written beside the log): a different digest there means the text changed beside the log.
    projected_sha256 = models.CharField(max_length=64, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(snapshot_seq__lte=F("last_seq"), projected_seq__lte=F("last_seq")),
                name="log_sequences_ordered",
            )
        ]
        indexes = [
            models.Index(fields=["project_id"], name="log_by_project"),
            models.Index(fields=["updated_at"], name="log_lagging", condition=Q(projected_seq__lt=F("last_seq"))),
        ]

    def __str__(self) -> str:
        return f"document {self.file_id} @ {self.last_seq}"


class AcceptedUpdate(models.Model):
    """One accepted Yjs update, in order. Rows are never edited."""

    log = models.ForeignKey(DocumentLog, on_delete=models.CASCADE, related_name="updates")
    seq = models.BigIntegerField()
    update = models.BinaryField()
    origin = models.CharField(max_length=8, choices=UpdateOrigin.choices)
    actor_id = models.IntegerField(null=True)
    accepted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["log", "seq"], name="update_seq_unique_per_log"),
            models.CheckConstraint(condition=Q(origin__in=UpdateOrigin.values), name="update_origin_known"),
            models.CheckConstraint(condition=Q(seq__gt=0), name="update_seq_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.log_id}#{self.seq}"


class LiveConnection(models.Model):
    """An open editor socket, so that limits per user and per document hold across server processes.

    The server process that holds the socket refreshes ``seen_at``; a row not seen for a minute belongs to a
    process that died and counts for nothing (the maintenance loop deletes it).
    """

    id = models.UUIDField(primary_key=True)
    user_id = models.IntegerField()
    project_id = models.UUIDField()
    file_id = models.BigIntegerField()
    opened_at = models.DateTimeField()
    seen_at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["user_id", "seen_at"], name="live_by_user"),
            models.Index(fields=["file_id", "seen_at"], name="live_by_document"),
        ]

    def __str__(self) -> str:
        return f"user {self.user_id} on {self.file_id}"


class CommentThread(models.Model):
    """A discussion of a stretch of a document's text. Not part of the text: it never reaches a build.

    The stretch is held by two Yjs relative positions (``collaboration/anchors.py``), so it follows its text
    through every edit; when the text is deleted the thread stays, "on deleted text".
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project_id = models.UUIDField()
    file_id = models.BigIntegerField()
    path = models.CharField(
        max_length=1024, help_text="The document's path when the thread began (shown once it is deleted)."
    )
    anchor_start = models.BinaryField()
    anchor_end = models.BinaryField()
    quote = models.TextField(help_text="The text commented on, as it was when the thread began.")
    created_by_id = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_by_id = models.IntegerField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project_id", "file_id"], name="threads_by_document")]

    def __str__(self) -> str:
        return f"thread {self.id} on {self.file_id}"


class Comment(models.Model):
    """One message of a thread: the first begins it, the others reply."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    thread = models.ForeignKey(CommentThread, on_delete=models.CASCADE, related_name="comments")
    author_id = models.IntegerField()
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    edited_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["thread", "created_at"], name="comments_in_order")]

    def __str__(self) -> str:
        return f"comment {self.id}"
