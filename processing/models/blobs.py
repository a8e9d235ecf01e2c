from django.db import models
from django.db.models import Q


class ProcessingBlob(models.Model):
    """Immutable bytes (inputs, staged outputs, artifacts), unique by digest and size.

    Rows that use a blob reference it with ``on_delete=PROTECT``, so PostgreSQL
    itself refuses to delete bytes another job still uses; the retention reaper
    removes a blob only when nothing references it and ``touched_at`` is past a
    grace period (every new use touches it).
    """

    sha256 = models.CharField(max_length=64)
    size_bytes = models.BigIntegerField()
    data = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)
    touched_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["sha256", "size_bytes"], name="blob_unique_by_digest_and_size"),
            models.CheckConstraint(condition=Q(size_bytes__gte=0), name="blob_size_nonnegative"),
            models.CheckConstraint(condition=Q(sha256__regex=r"^[0-9a-f]{64}$"), name="blob_digest_hex"),
        ]
        indexes = [models.Index(fields=["touched_at"], name="blob_by_touch")]

    def __str__(self) -> str:
        return f"{self.sha256[:12]}… ({self.size_bytes} B)"
