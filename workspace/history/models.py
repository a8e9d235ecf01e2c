"""The journal of file writes, the versions it is folded into, and labels naming versions."""

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q


class FileChange(models.Model):
    """One write to a file row as the database saw it (``journal.py``), waiting to be folded into a version.

    Not a foreign key to the project: the trigger also journals the deletes of a project being deleted."""

    project_id = models.UUIDField()
    file_id = models.BigIntegerField()
    operation = models.CharField(max_length=1)  # I(nsert), U(pdate), D(elete)
    file_kind = models.CharField(max_length=8)
    path = models.CharField(max_length=1024)
    old_path = models.CharField(max_length=1024, blank=True, default="")
    sha256 = models.CharField(max_length=64, blank=True, default="")
    old_sha256 = models.CharField(max_length=64, blank=True, default="")
    actors = ArrayField(models.IntegerField(), default=list)
    restore_of = models.BigIntegerField(null=True)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["project_id", "id"], name="file_change_by_project")]

    def __str__(self) -> str:
        return f"{self.operation} {self.path}"


class VersionKind(models.TextChoices):
    EDIT = "edit"
    RESTORE = "restore"


class Version(models.Model):
    """Consecutive changes with no pause longer than the history gap, or one restore. ``closed`` once a label
    or a restore ended it: the next change starts a new version however soon it comes."""

    project = models.ForeignKey("workspace.Project", on_delete=models.CASCADE, related_name="versions")
    number = models.BigIntegerField()
    kind = models.CharField(max_length=8, choices=VersionKind.choices, default=VersionKind.EDIT)
    restored_from = models.BigIntegerField(null=True, blank=True)
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    authors = ArrayField(models.IntegerField(), default=list)
    closed = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "number"], name="version_number_unique"),
            models.CheckConstraint(condition=Q(number__gte=1), name="version_number_positive"),
        ]

    def __str__(self) -> str:
        return f"version {self.number} of {self.project_id}"


class VersionChange(models.Model):
    """What one version did to one file (by id, which survives renames): its state before and after."""

    version = models.ForeignKey(Version, on_delete=models.CASCADE, related_name="changes")
    project_id = models.UUIDField()
    number = models.BigIntegerField()  # the version's, so a file's state at a version is one index range
    file_id = models.BigIntegerField()
    file_kind = models.CharField(max_length=8)
    path = models.CharField(max_length=1024)
    old_path = models.CharField(max_length=1024)
    existed_before = models.BooleanField()
    exists_after = models.BooleanField()
    sha_before = models.CharField(max_length=64, blank=True, default="")
    sha_after = models.CharField(max_length=64, blank=True, default="")
    added = models.IntegerField(default=0)
    removed = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["version", "file_id"], name="version_change_once_per_file")]
        indexes = [
            models.Index(fields=["project_id", "file_id", "number"], name="file_states_by_version"),
            models.Index(fields=["sha_after"], name="version_content"),
        ]

    def __str__(self) -> str:
        return f"{self.path} in {self.version_id}"


class Label(models.Model):
    project = models.ForeignKey("workspace.Project", on_delete=models.CASCADE, related_name="labels")
    name = models.CharField(max_length=200)
    version = models.ForeignKey(Version, on_delete=models.CASCADE, related_name="labels")
    created_by_id = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="label_name_unique")]

    def __str__(self) -> str:
        return self.name


class HistoryCursor(models.Model):
    """How far a project's journal has been folded; its row lock serialises folding the project."""

    project = models.OneToOneField("workspace.Project", on_delete=models.CASCADE, primary_key=True)
    folded_through = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.project_id} through {self.folded_through}"
