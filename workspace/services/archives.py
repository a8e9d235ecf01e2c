"""Zip archives into a project (unpacked into a folder, one fenced change) and into a new project (its main
file and type detected), and a project out as a zip (a snapshot that holds every stored edit)."""

import posixpath
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from django.db import transaction

from access import facade as access
from workspace import documents, provisioning
from workspace.archives import ArchiveEntry, ArchiveInvalid, archive_chunks, archive_read
from workspace.history import folding
from workspace.models import Project, ProjectFile, ProjectFolder
from workspace.paths import path_normalize
from workspace.services.batches import BatchWritten, files_write_batch
from workspace.services.content import fence_enter
from workspace.snapshots import FrozenSnapshot, pin_release, snapshot_contents, snapshot_freeze

DOCUMENT_CLASS = re.compile(rb"^[^%\n]*\\documentclass", re.MULTILINE)
XETEX_PACKAGES = re.compile(rb"^[^%\n]*\\usepackage(\[[^\]]*\])?\{[^}]*\b(fontspec|polyglossia|xeCJK)\b", re.MULTILINE)
LUATEX_MARKS = re.compile(rb"^[^%\n]*(\\directlua|\\usepackage(\[[^\]]*\])?\{[^}]*\bluacode\b)", re.MULTILINE)
MAIN_NAMES = ("main", "paper", "thesis", "article", "report", "book", "document", "index")


@dataclass(frozen=True)
class Unpacked:
    written: BatchWritten
    skipped: list[str]


def archive_unpack(
    *, actor_id: int, project_id: uuid.UUID, data: bytes, into: str = "", overwrite: bool = False
) -> Unpacked:
    """Unpack a zip into the folder ``into`` (the project's top when empty), in one fenced change."""
    access.permission_require(user_id=actor_id, project_id=project_id, permission=access.Permission.EDIT)
    into = path_normalize(into.strip("/")) if into.strip("/") else ""
    contents = archive_read(data)
    prefix = f"{into}/" if into else ""
    written = files_write_batch(
        actor_id=actor_id,
        project_id=project_id,
        files=[(prefix + path, content) for path, content in contents.files],
        folders=([into] if into else []) + [prefix + folder for folder in contents.folders],
        overwrite=overwrite,
    )
    return Unpacked(written, contents.skipped)


@dataclass(frozen=True)
class Detected:
    project_type: str
    entry_path: str
    compiler: str


def entry_detect(files: list[tuple[str, bytes]]) -> Detected:
    """The main file and type of an unpacked project: a ``.tex`` that has ``\\documentclass`` (LaTeX; its
    compiler from its packages), else a ``.typ``; the shallowest, then a usual main name, then the first."""

    def rank(path: str) -> tuple:
        stem = posixpath.splitext(posixpath.basename(path))[0].lower()
        return (path.count("/"), stem not in MAIN_NAMES, MAIN_NAMES.index(stem) if stem in MAIN_NAMES else 0, path)

    latex = sorted((path for path, data in files if path.endswith(".tex") and _has_document_class(data)), key=rank)
    if latex:
        source = dict(files)[latex[0]]
        compiler = "lualatex" if LUATEX_MARKS.search(source) else "xelatex" if XETEX_PACKAGES.search(source) else ""
        return Detected("latex", latex[0], compiler or "pdflatex")
    typst = sorted((path for path, _ in files if path.endswith(".typ")), key=rank)
    if typst:
        return Detected("typst", typst[0], "")
    raise ArchiveInvalid(
        "The archive has no main file: no .tex file with \\documentclass and no .typ file.",
        details={"reason": "no_main_file"},
    )


def _has_document_class(data: bytes) -> bool:
    """``\\documentclass`` outside a comment; most sources lack it altogether, which a plain search says fast."""
    return b"\\documentclass" in data and DOCUMENT_CLASS.search(data) is not None


def project_from_archive(*, actor_id: int, name: str, data: bytes) -> tuple[uuid.UUID, list[str]]:
    """A new project owned by ``actor_id`` from a zip (one top-level folder holding everything is left out);
    returns its id and the members skipped."""
    contents = archive_read(data, strip_single_folder=True)
    detected = entry_detect(contents.files)
    prepared = provisioning.provision_prepare(
        name=name or "Uploaded project",
        project_type=detected.project_type,
        entry_path=detected.entry_path,
        compiler=detected.compiler,
        files=contents.files,
        folders=contents.folders,
    )
    with transaction.atomic(durable=True):
        project_id = provisioning.provision_commit(prepared=prepared, owner_id=actor_id)
        folding.version_close(project_id=project_id)  # the project as uploaded is a version of its own
    return project_id, contents.skipped


@dataclass(frozen=True)
class ArchiveOut:
    name: str
    chunks: Iterator[bytes]


def project_archive(*, user_id: int, project_id: uuid.UUID) -> ArchiveOut:
    """The project's current files as a zip, streamed: text as every stored edit left it, assets byte for
    byte, folders (empty ones too) kept. The snapshot is pinned until the last byte is sent."""
    access.permission_require(user_id=user_id, project_id=project_id, permission=access.Permission.VIEW)
    with transaction.atomic():
        fence_enter(project_id)
        documents.projections_pending(project_id=project_id)
        snapshot = snapshot_freeze(project_id=project_id)
        folders = list(
            ProjectFolder.objects.filter(project_id=project_id).order_by("path").values_list("path", flat=True)
        )
        name = Project.objects.values_list("name", flat=True).get(pk=project_id)
    return ArchiveOut(name, _streamed(snapshot, folders))


def _streamed(snapshot: FrozenSnapshot, folders: list[str]) -> Iterator[bytes]:
    try:
        yield from archive_chunks(folders, _entries(snapshot))
    finally:
        pin_release(pin_id=snapshot.pin_id)


def _entries(snapshot: FrozenSnapshot) -> Iterator[ArchiveEntry]:
    """Each file of the snapshot with its bytes, one at a time, checked against its digest (as a capture reads)."""
    changed = dict(ProjectFile.objects.filter(project_id=snapshot.project_id).values_list("path", "updated_at"))
    for file, data in snapshot_contents(snapshot):
        yield ArchiveEntry(file.path, changed.get(file.path) or snapshot.content_changed_at, [data])
