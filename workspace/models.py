import uuid

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import F, Q


class ProjectType(models.TextChoices):
    LATEX = "latex", "LaTeX"
    TYPST = "typst", "Typst"


class Compiler(models.TextChoices):  # labels as their authors spell them
    PDFLATEX = "pdflatex", "pdfLaTeX"
    XELATEX = "xelatex", "XeLaTeX"
    LUALATEX = "lualatex", "LuaLaTeX"


class FileKind(models.TextChoices):
    TEXT = "text"
    ASSET = "asset"


class Project(models.Model):
    """A LaTeX or Typst project. ``generation`` counts content mutations, each made under the fence."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    type = models.CharField(max_length=8, choices=ProjectType.choices)
    entry_path = models.CharField(max_length=1024)
    compiler = models.CharField(max_length=16, choices=Compiler.choices, blank=True, default="")
    generation = models.BigIntegerField(default=0)
    content_changed_at = models.DateTimeField()
    file_count = models.IntegerField(default=0)
    total_bytes = models.BigIntegerField(default=0)
    created_by_id = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(type__in=ProjectType.values), name="project_type_known"),
            models.CheckConstraint(
                condition=(Q(type="latex") & Q(compiler__in=Compiler.values)) | (Q(type="typst") & Q(compiler="")),
                name="project_compiler_fits_type",
            ),
            models.CheckConstraint(condition=Q(generation__gte=0), name="project_generation_nonnegative"),
            models.CheckConstraint(
                condition=Q(file_count__gte=0, total_bytes__gte=0), name="project_usage_nonnegative"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class ProjectFile(models.Model):
    """A file at a normalised path; content addressed by ``sha256`` (``TextContent`` or asset storage)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="files")
    path = models.CharField(max_length=1024)
    kind = models.CharField(max_length=8, choices=FileKind.choices)
    sha256 = models.CharField(max_length=64)
    size_bytes = models.BigIntegerField()
    version = models.BigIntegerField(default=1, help_text="Counts content changes; the file's ETag.")
    # A text file that is not UTF-8 (Latin-1, Windows-1252, KOI8-R, Shift-JIS…) is kept byte for byte as an
    # asset, so it builds as it did on its author's machine; this names the encoding it was detected in.
    encoding = models.CharField(max_length=40, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "path"], name="file_path_unique_in_project"),
            models.CheckConstraint(condition=Q(version__gte=1), name="file_version_positive"),
            models.CheckConstraint(condition=Q(kind__in=FileKind.values), name="file_kind_known"),
            models.CheckConstraint(condition=Q(size_bytes__gte=0), name="file_size_nonnegative"),
        ]
        indexes = [models.Index(fields=["sha256"], name="file_by_digest")]

    def __str__(self) -> str:
        return self.path


class ProjectFolder(models.Model):
    """A folder of a project. Every folder a file sits in has a row (made with the file), and a folder may be
    empty; a path is a file or a folder, never both (``workspace/tree.py`` keeps the rules)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="folders")
    path = models.CharField(max_length=1024)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "path"], name="folder_path_unique_in_project")]

    def __str__(self) -> str:
        return f"{self.path}/"


class ProjectOutput(models.Model):
    """The project's current output: what its latest successful build of the newest capture made, for every
    member to read. Processing publishes it (``workspace.facade.output_publish``) in the transaction in which
    the build succeeds; an older capture's build that finishes later never replaces it."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, primary_key=True, related_name="output")
    job_id = models.UUIDField()
    operation = models.CharField(max_length=64)
    built_by_id = models.IntegerField()
    built_at = models.DateTimeField()
    generation = models.BigIntegerField(help_text="The project generation the build captured.")
    documents = models.JSONField(default=list, help_text="[[path, version], …] of the text documents captured.")
    words = models.IntegerField(null=True, blank=True)
    diagnostics = models.JSONField(default=list)
    log = models.TextField(blank=True, default="")

    def __str__(self) -> str:
        return f"output of {self.project_id} from {self.job_id}"


class OutputArtifact(models.Model):
    """One file of a project's output (its PDF, log, SyncTeX data, report), its bytes in asset storage."""

    output = models.ForeignKey(ProjectOutput, on_delete=models.CASCADE, related_name="artifacts")
    role = models.CharField(max_length=32)
    media_type = models.CharField(max_length=100)
    filename = models.CharField(max_length=255)
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["output", "role"], name="output_role_unique")]
        indexes = [models.Index(fields=["sha256"], name="output_artifact_by_digest")]

    def __str__(self) -> str:
        return f"{self.role} of {self.output_id}"


class TextContent(models.Model):
    """Immutable UTF-8 text, shared by every file and snapshot with the same digest."""

    sha256 = models.CharField(max_length=64, primary_key=True)
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.sha256


class OrphanedContent(models.Model):
    """Content the collector found named by no file and no live pin, and when it first did: it is deleted only
    once it has stayed so for the collector's grace (workspace/collector.py), so a reader that looked up a file a
    moment before its content was replaced still finds the old bytes."""

    sha256 = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=FileKind.choices)
    orphaned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["sha256", "kind"], name="orphan_once_per_kind")]

    def __str__(self) -> str:
        return f"{self.kind} {self.sha256} since {self.orphaned_at:%Y-%m-%d %H:%M}"


class SnapshotPin(models.Model):
    """Names the content digests of a frozen snapshot, which any collector must keep until released.

    Not a foreign key to the project: a capture that is reading pinned bytes must
    keep them even if the project is deleted meanwhile.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project_id = models.UUIDField()
    generation = models.BigIntegerField()
    digests = ArrayField(models.CharField(max_length=64), default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [
            GinIndex(fields=["digests"], name="pin_digests"),
            models.Index(fields=["expires_at"], name="pin_expiry"),
        ]
        constraints = [models.CheckConstraint(condition=Q(expires_at__gt=F("created_at")), name="pin_expires_later")]

    def __str__(self) -> str:
        return f"pin {self.id} g{self.generation}"


# History's models live beside the code that keeps them; importing them here registers them with the app.
from workspace.history.models import FileChange, HistoryCursor, Label, Version, VersionChange  # noqa: E402, F401
