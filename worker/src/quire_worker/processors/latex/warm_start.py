"""Warm starts: the auxiliary files a successful build leaves (``.aux``, ``.toc``, ``.bbl``, ``.fdb_latexmk``…),
packed as one gzipped tar that Core keeps as the build's ``warm`` result and hands to the project's next build of
the same entry file and compiler.

latexmk decides what to run from its ``.fdb_latexmk`` by content digests, not file times, so a build that starts
from these files runs only the passes its change needs: one ``pdflatex`` pass for a changed word, BibTeX/Biber only
when the citations or the ``.bib`` changed. Its last pass reads the same fixed point of the auxiliary files a
clean build converges to, so the PDF is the same bytes (``tests/worker/processors/latex/test_warm_start.py``).

The archive is input like any other: read defensively (regular files only, names that stay inside the project,
suffixes of auxiliary files only, never a project file's path, bounded in count and size), and used only when it
was made for the same entry file, compiler and processor contract; anything else starts clean.
"""

import gzip
import io
import json
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from quire_worker.processors.latex.work_area import WorkArea

SCHEMA = "quire-latex-warm-start/1"
META_NAME = "warm-start.json"
MAX_FILES = 256
MAX_BYTES = 16 * 1024 * 1024
MAX_ARCHIVE_BYTES = MAX_BYTES + (MAX_FILES + 1) * 2048  # with the tar headers of every member
# What a TeX run writes for the next one to read: cross-references, lists, bibliography, index, glossaries,
# beamer's navigation, and latexmk's own database of what each pass read.
SUFFIXES = (
    ".aux",
    ".toc",
    ".lof",
    ".lot",
    ".loa",
    ".lol",
    ".out",
    ".bbl",
    ".bcf",
    ".run.xml",
    ".idx",
    ".ind",
    ".ilg",
    ".glo",
    ".gls",
    ".glg",
    ".acn",
    ".acr",
    ".alg",
    ".ist",
    ".nlo",
    ".nls",
    ".nav",
    ".snm",
    ".vrb",
    ".brf",
    ".fdb_latexmk",
)


@dataclass(frozen=True)
class WarmStartKey:
    """What a warm start must have been made for: the same entry file, compiler and processor contract."""

    entry_path: str
    engine: str
    contract: str

    def as_meta(self) -> dict:
        return {"schema": SCHEMA, "entry": self.entry_path, "engine": self.engine, "contract": self.contract}


@dataclass(frozen=True)
class WarmFiles:
    files: tuple[tuple[str, bytes], ...]  # (path below the sources, bytes), sorted

    @property
    def total_bytes(self) -> int:
        return sum(len(data) for _, data in self.files)


class WarmStartRefused(Exception):
    """The archive cannot be used; the message says why (it goes into the build's notes)."""


def is_auxiliary(path: str) -> bool:
    return path.endswith(SUFFIXES)


def _safe_name(name: str) -> bool:
    path = PurePosixPath(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts and "\\" not in name


def warm_files_collect(work: WorkArea, project_paths: frozenset[str]) -> WarmFiles | None:
    """The auxiliary files the build left below its sources, or None when they exceed the bounds.

    The sandbox may have left links anywhere below the sources: ``os.fwalk`` never follows them, and each file
    is opened relative to its directory without following a link."""
    files, total = [], 0
    for directory, _, names, directory_fd in os.fwalk(work.sources):
        relative = PurePosixPath(os.path.relpath(directory, work.sources))
        for name in names:
            path = str(relative / name) if str(relative) != "." else name
            if not is_auxiliary(path) or path in project_paths:
                continue
            data = _regular_file_bytes(directory_fd, name, MAX_BYTES - total)
            if data is None:
                continue
            files.append((path, data))
            total += len(data)
            if len(files) > MAX_FILES or total > MAX_BYTES:
                return None
    return WarmFiles(tuple(sorted(files)))


def _regular_file_bytes(directory_fd: int, name: str, limit: int) -> bytes | None:
    try:
        descriptor = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory_fd)
    except OSError:
        return None
    with open(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
        return file.read(limit + 1)


def warm_archive_write(destination: Path, warm: WarmFiles, key: WarmStartKey) -> None:
    """A reproducible archive: the same files give the same bytes (sorted, no times, no owners)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in ((META_NAME, json.dumps(key.as_meta(), sort_keys=True).encode()), *warm.files):
            member = tarfile.TarInfo(name)
            member.size, member.mode, member.mtime = len(data), 0o644, 0
            archive.addfile(member, io.BytesIO(data))
    destination.write_bytes(gzip.compress(buffer.getvalue(), mtime=0))


def warm_archive_read(source: Path, key: WarmStartKey, project_paths: frozenset[str]) -> WarmFiles:
    """The archive's auxiliary files, if it was made for ``key`` and keeps every rule; else WarmStartRefused."""
    try:
        with gzip.open(source, "rb") as compressed:
            raw = compressed.read(MAX_ARCHIVE_BYTES + 1)
        if len(raw) > MAX_ARCHIVE_BYTES:
            raise WarmStartRefused("the warm start is larger than its bound")
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as archive:
            members = archive.getmembers()
            if len(members) > MAX_FILES + 1:
                raise WarmStartRefused("the warm start holds too many files")
            contents = {member.name: _member_bytes(archive, member) for member in members}
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise WarmStartRefused(f"the warm start is not a readable archive ({exc})") from exc
    try:
        meta = json.loads(contents.pop(META_NAME, b""))
    except ValueError as exc:
        raise WarmStartRefused("the warm start does not say what it was made for") from exc
    if meta != key.as_meta():
        raise WarmStartRefused("the warm start was made for another entry file, compiler or processor")
    for name in contents:
        if not _safe_name(name) or not is_auxiliary(name) or name in project_paths:
            raise WarmStartRefused(f"the warm start holds a file it may not: {name!r}")
    warm = WarmFiles(tuple(sorted(contents.items())))
    if warm.total_bytes > MAX_BYTES:
        raise WarmStartRefused("the warm start is larger than its bound")
    return warm


def _member_bytes(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    if not member.isreg():
        raise WarmStartRefused(f"the warm start holds something other than a file: {member.name!r}")
    extracted = archive.extractfile(member)
    return extracted.read() if extracted is not None else b""


def warm_files_place(work: WorkArea, warm: WarmFiles) -> None:
    """Lay the files out below the sources before the sandbox runs (nothing there is the sandbox's yet)."""
    for name, data in warm.files:
        target = work.sources / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
