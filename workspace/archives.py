"""Projects in and out as zip archives.

**In.** An archive is read whole and judged before anything is written: its size, member count, expanded
size and compression ratio are bounded (``ArchiveTooLarge``, so a zip bomb is refused from its central
directory, before a byte is inflated: a member that inflates past its declared size fails its CRC check as
corrupt); every member must be a regular file or a folder whose name follows the project's path rules (no
``..``, no absolute paths, no links or device files, no NUL, no two names that differ only in case:
``ArchiveMemberInvalid`` names the first offender). Finder's ``__MACOSX/`` and ``.DS_Store`` entries are
skipped and said so.

**Out.** ``archive_chunks`` writes a zip of a frozen snapshot as it goes (data descriptors, no seeking), so a
project of any size streams with one file's bytes and a megabyte of zip in memory. Already compressed formats
are stored, the rest deflated as ``zip`` does by default.
"""

import posixpath
import re
import stat
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from io import BytesIO, RawIOBase

from django.conf import settings

from workspace import limits
from workspace.exceptions import WorkspaceError
from workspace.paths import path_normalize
from workspace.tree import FILE, FOLDER, PathTree

MiB = 1024 * 1024
JUNK = re.compile(r"(^|/)(__MACOSX(/|$)|\.DS_Store$|Thumbs\.db$)")
LINKS_AND_DEVICES = {
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFCHR: "a device file",
    stat.S_IFBLK: "a device file",
    stat.S_IFIFO: "a pipe",
    stat.S_IFSOCK: "a socket",
}
STORED_EXTENSIONS = frozenset(
    {".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf", ".zip", ".gz", ".bz2", ".xz", ".7z", ".docx", ".xlsx",
     ".pptx", ".odt", ".ods", ".odp", ".mp4", ".mp3", ".woff", ".woff2", ".otf"}
)  # fmt: skip
WRITE_CHUNK = 1024 * 1024


class ArchiveInvalid(WorkspaceError):
    """That is not a zip archive Quire can read."""

    code = "archive_invalid"


class ArchiveMemberInvalid(WorkspaceError):
    """A member of the archive cannot become a project file; `details.member` names it."""

    code = "archive_member_invalid"


class ArchiveTooLarge(WorkspaceError):
    """The archive is larger than a project may be; `details.limit` names the limit."""

    code = "archive_too_large"
    status_code = 413

    def __init__(self, message: str | None = None, *, details: dict | None = None, headers=None):
        # A body refused for its size alone (by the view, or at the edge) names no limit: it is the archive's.
        super().__init__(message, details={"limit": "archive_bytes", **(details or {})}, headers=headers)


def max_archive_bytes() -> int:
    return getattr(settings, "WORKSPACE_MAX_ARCHIVE_BYTES", 128 * MiB)


def max_ratio() -> int:
    """How many times its own size an archive may expand to (past ``RATIO_FREE_BYTES``)."""
    return getattr(settings, "WORKSPACE_ARCHIVE_MAX_RATIO", 200)


RATIO_FREE_BYTES = 8 * MiB


@dataclass
class ArchiveContents:
    files: list[tuple[str, bytes]] = field(default_factory=list)
    folders: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _member_refused(member: str, reason: str, rule: str) -> ArchiveMemberInvalid:
    shown = member.replace("\x00", "\\0")
    return ArchiveMemberInvalid(f"{shown}: {reason}", details={"member": shown, "rule": rule})


def _opened(data: bytes) -> zipfile.ZipFile:
    if len(data) > max_archive_bytes():
        raise ArchiveTooLarge(details={"limit_bytes": max_archive_bytes()})
    try:
        return zipfile.ZipFile(BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        raise ArchiveInvalid(details={"reason": str(exc)[:200]}) from exc


def _bounds_check(members: list[zipfile.ZipInfo], archive_bytes: int) -> None:
    if len(members) > limits.max_files_per_project() * 2:  # files and their folders
        raise ArchiveTooLarge(details={"limit": "members", "members": len(members)})
    expanded = sum(member.file_size for member in members)
    if expanded > limits.max_project_bytes():
        raise ArchiveTooLarge(details={"limit": "expanded_bytes", "limit_bytes": limits.max_project_bytes()})
    if expanded > RATIO_FREE_BYTES and expanded > max_ratio() * max(archive_bytes, 1):
        raise ArchiveTooLarge(details={"limit": "ratio", "ratio": max_ratio()})


def _member_path(member: zipfile.ZipInfo) -> str:
    name = member.orig_filename
    if "\x00" in name:
        raise _member_refused(name, "its name holds a NUL character", "nul")
    kind = stat.S_IFMT(member.external_attr >> 16) if member.create_system == 3 else 0
    if kind in LINKS_AND_DEVICES:
        raise _member_refused(name, f"it is {LINKS_AND_DEVICES[kind]}, not a file", "not_a_file")
    if member.flag_bits & 0x1:
        raise _member_refused(name, "it is encrypted", "encrypted")
    try:
        return path_normalize(name.rstrip("/") if member.is_dir() else name)
    except WorkspaceError as exc:
        raise _member_refused(name, exc.message, exc.details.get("rule", "path")) from exc


def _member_bytes(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bytes:
    try:
        return archive.read(member)
    except (zipfile.BadZipFile, EOFError, OSError) as exc:  # a bad CRC: corrupt, or more than it declared
        raise _member_refused(member.orig_filename, "it is damaged", "corrupt") from exc
    except NotImplementedError as exc:
        raise _member_refused(member.orig_filename, "its compression method is not supported", "method") from exc


def archive_read(data: bytes, *, strip_single_folder: bool = False) -> ArchiveContents:
    """The files and folders of a zip archive, every rule checked first; raises ``ArchiveInvalid``,
    ``ArchiveMemberInvalid`` or ``ArchiveTooLarge`` before reading a member that would break one.

    ``strip_single_folder``: when every member sits in one top-level folder (as most tools, Overleaf included,
    make them), that folder is left out."""
    with _opened(data) as archive:
        members = archive.infolist()
        _bounds_check(members, len(data))
        contents, wanted = ArchiveContents(), []
        for member in members:
            if JUNK.search(member.orig_filename):
                contents.skipped.append(member.orig_filename)
                continue
            wanted.append((member, _member_path(member)))
        prefix = _single_folder(wanted) if strip_single_folder else ""
        tree = PathTree([], [])
        for member, path in wanted:
            path = path[len(prefix) :]
            if not path:
                continue
            _place(tree, member, path)
            if member.is_dir():
                contents.folders.append(path)
            else:
                contents.files.append((path, _member_bytes(archive, member)))
        return contents


def _single_folder(wanted: list[tuple[zipfile.ZipInfo, str]]) -> str:
    files = [path for member, path in wanted if not member.is_dir()]
    tops = {path.split("/", 1)[0] for _, path in wanted}
    if files and len(tops) == 1 and all("/" in path for path in files):
        return tops.pop() + "/"
    return ""


def _place(tree: PathTree, member: zipfile.ZipInfo, path: str) -> None:
    """Check ``path`` against the archive's own members so far (duplicates, case clashes, file vs folder)."""
    try:
        for folder in tree.folders_missing_for(path):
            tree.add(folder, FOLDER)
        if member.is_dir():
            if not tree.is_folder(path):
                tree.require_free(path, kind=FOLDER)
                tree.add(path, FOLDER)
            return
        tree.require_free(path, kind=FILE)
        tree.add(path, FILE)
    except WorkspaceError as exc:
        rule = exc.details.get("rule", "duplicate")
        raise _member_refused(member.orig_filename, f"it clashes with another member: {exc.message}", rule) from exc


# --- out -------------------------------------------------------------------------------------------------
class _Chunks(RawIOBase):
    """A write-only, unseekable stream that keeps what was written until it is taken (zipfile writes data
    descriptors to such a stream instead of seeking back)."""

    def __init__(self):
        self._buffer = bytearray()
        self._offset = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self._buffer += data
        self._offset += len(data)
        return len(data)

    def tell(self) -> int:
        return self._offset

    def pending(self) -> int:
        return len(self._buffer)

    def take(self) -> bytes:
        data = bytes(self._buffer)
        self._buffer.clear()
        return data


@dataclass(frozen=True)
class ArchiveEntry:
    """A file to write: its path, when it last changed, and its bytes (in one or more pieces)."""

    path: str
    changed_at: datetime
    pieces: Iterable[bytes]


def archive_chunks(folders: list[str], entries: Iterable[ArchiveEntry]) -> Iterator[bytes]:
    """The zip of ``folders`` and ``entries``, piece by piece."""
    sink = _Chunks()
    with zipfile.ZipFile(sink, mode="w", allowZip64=True) as archive:
        for folder in folders:
            archive.writestr(zipfile.ZipInfo(folder + "/", date_time=(1980, 1, 1, 0, 0, 0)), b"")
        yield sink.take()
        for entry in entries:
            info = zipfile.ZipInfo(entry.path, date_time=_zip_time(entry.changed_at))
            stored = posixpath.splitext(entry.path)[1].lower() in STORED_EXTENSIONS
            info.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            with archive.open(info, mode="w") as target:  # no file is near 2 GiB (limits.max_asset_bytes)
                for piece in entry.pieces:
                    target.write(piece)
                    if sink.pending() >= WRITE_CHUNK:
                        yield sink.take()
            yield sink.take()
    yield sink.take()


def _zip_time(moment: datetime) -> tuple[int, int, int, int, int, int]:
    moment = max(moment, datetime(1980, 1, 1, tzinfo=moment.tzinfo))
    return (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)
