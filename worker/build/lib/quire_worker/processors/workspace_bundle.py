"""``workspace-bundle/v1``: a candidate project as one deterministic tar (see docs/workspace-bundle.md).

The writer is used by file-import processors; the reader checks every rule again, so the
orchestrator (and Core's finalizer, which may reuse it: it needs only the standard library)
never trusts what a sandboxed child wrote.
"""

import hashlib
import io
import json
import tarfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from quire_wire import WORKSPACE_BUNDLE_SCHEMA

SCHEMA = WORKSPACE_BUNDLE_SCHEMA
MEDIA_TYPE = "application/x-tar"
MANIFEST_NAME = "manifest.json"
FILES_PREFIX = "files/"
KINDS = frozenset({"text", "asset"})
PROJECT_TYPES = frozenset({"typst"})
# The same path rule as Workspace's (workspace/paths.py), restated because the worker imports no app.
MAX_SEGMENT_BYTES = 255
MAX_PATH_BYTES = 1024
MAX_NAME_CHARS = 200
MAX_MANIFEST_BYTES = 4 * 1024 * 1024


class WorkspaceBundleError(ValueError):
    """The archive is not a valid workspace-bundle/v1; ``code`` names the broken rule."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class BundleFile:
    path: str
    kind: str  # "text" (UTF-8) or "asset"
    data: bytes


@dataclass(frozen=True)
class WorkspaceBundle:
    project_type: str
    suggested_name: str
    entry_path: str
    files: tuple[BundleFile, ...]


def bundle_bytes(bundle: WorkspaceBundle) -> bytes:
    """The canonical archive: manifest first, then ``files/<path>`` in path order, zeroed metadata."""
    files = sorted(bundle.files, key=lambda item: item.path)
    manifest = {
        "schema": SCHEMA,
        "project_type": bundle.project_type,
        "suggested_name": bundle.suggested_name,
        "entry_path": bundle.entry_path,
        "files": [_file_record(item) for item in files],
    }
    manifest_bytes = json.dumps(manifest, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as archive:
        _add_member(archive, MANIFEST_NAME, manifest_bytes)
        for item in files:
            _add_member(archive, FILES_PREFIX + item.path, item.data)
    return buffer.getvalue()


def _file_record(item: BundleFile) -> dict:
    return {
        "path": item.path,
        "kind": item.kind,
        "length": len(item.data),
        "sha256": hashlib.sha256(item.data).hexdigest(),
    }


def _add_member(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    archive.addfile(info, io.BytesIO(data))


def read_bundle(path: Path, *, max_files: int, max_expanded_bytes: int) -> WorkspaceBundle:
    """Read and validate an archive; raise WorkspaceBundleError naming the first broken rule."""
    try:
        with tarfile.open(path, mode="r:", encoding="utf-8") as archive:
            members = _bounded_members(archive, max_files=max_files, max_expanded_bytes=max_expanded_bytes)
            contents = {member.name: _member_bytes(archive, member) for member in members}
    except (tarfile.TarError, OSError, UnicodeError) as exc:
        raise WorkspaceBundleError("not_a_tar", f"The bundle is not a readable tar archive: {exc}") from exc
    manifest = _manifest(contents.pop(MANIFEST_NAME, None))
    return _bundle_from(manifest, contents)


def _bounded_members(archive: tarfile.TarFile, *, max_files: int, max_expanded_bytes: int) -> list:
    members, total = [], 0
    for member in archive:
        if not member.isreg():
            raise WorkspaceBundleError("not_a_regular_file", f"{member.name!r} is not a regular file.")
        total += member.size
        if len(members) >= max_files + 1 or total > max_expanded_bytes:
            raise WorkspaceBundleError("too_large", "The bundle has too many files or too many bytes.")
        if not members and member.name != MANIFEST_NAME:
            raise WorkspaceBundleError("manifest_not_first", "The bundle must start with manifest.json.")
        if members and not member.name.startswith(FILES_PREFIX):
            raise WorkspaceBundleError("stray_member", f"{member.name!r} is outside files/.")
        members.append(member)
    if len({member.name for member in members}) != len(members):
        raise WorkspaceBundleError("duplicate_member", "The bundle names the same member twice.")
    return members


def _member_bytes(archive: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    stream = archive.extractfile(member)
    data = stream.read(member.size + 1) if stream else b""
    if len(data) != member.size:
        raise WorkspaceBundleError("truncated", f"{member.name!r} is truncated.")
    return data


def _manifest(raw: bytes | None) -> dict:
    if raw is None or len(raw) > MAX_MANIFEST_BYTES:
        raise WorkspaceBundleError("manifest_missing", "The bundle has no usable manifest.json.")
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise WorkspaceBundleError("manifest_invalid", "manifest.json is not JSON.") from exc
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        raise WorkspaceBundleError("wrong_schema", f"manifest.json is not a {SCHEMA} manifest.")
    if manifest.get("project_type") not in PROJECT_TYPES:
        raise WorkspaceBundleError("wrong_project_type", "The bundle's project type is not supported.")
    name = manifest.get("suggested_name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_CHARS:
        raise WorkspaceBundleError("bad_name", "The suggested name is missing or too long.")
    if not isinstance(manifest.get("files"), list):
        raise WorkspaceBundleError("manifest_invalid", "manifest.json has no file list.")
    return manifest


def _bundle_from(manifest: dict, contents: dict[str, bytes]) -> WorkspaceBundle:
    files, paths = [], []
    for record in manifest["files"]:
        path = _checked_record(record)
        data = contents.pop(FILES_PREFIX + path, None)
        if data is None or len(data) != record["length"]:
            raise WorkspaceBundleError("length_mismatch", f"{path!r} is missing or has the wrong length.")
        if hashlib.sha256(data).hexdigest() != record["sha256"]:
            raise WorkspaceBundleError("digest_mismatch", f"{path!r} does not match its sha256.")
        if record["kind"] == "text" and not _is_utf8(data):
            raise WorkspaceBundleError("text_not_utf8", f"{path!r} is declared text but is not UTF-8.")
        files.append(BundleFile(path=path, kind=record["kind"], data=data))
        paths.append(path)
    if contents:
        raise WorkspaceBundleError("unlisted_member", f"{sorted(contents)[0]!r} is not in the manifest.")
    if paths != sorted(set(paths)):
        raise WorkspaceBundleError("unsorted_files", "Manifest paths must be unique and sorted.")
    _check_no_file_is_a_folder(paths)
    entry = manifest.get("entry_path")
    if not any(item.path == entry and item.kind == "text" for item in files):
        raise WorkspaceBundleError("entry_missing", "The entry file is not a text file of the bundle.")
    return WorkspaceBundle(manifest["project_type"], manifest["suggested_name"], entry, tuple(files))


def _checked_record(record) -> str:
    if not isinstance(record, dict) or set(record) != {"path", "kind", "length", "sha256"}:
        raise WorkspaceBundleError("bad_record", "A file record must have path, kind, length and sha256.")
    if record["kind"] not in KINDS or not isinstance(record["length"], int) or record["length"] < 0:
        raise WorkspaceBundleError("bad_record", f"The record for {record['path']!r} is malformed.")
    path = record["path"]
    problem = path_problem(path)
    if problem:
        raise WorkspaceBundleError("bad_path", f"{path!r}: {problem}")
    return path


def path_problem(path) -> str | None:
    """Why ``path`` is not a canonical project path, or None (mirrors workspace/paths.py)."""
    if not isinstance(path, str) or not path:
        return "a path must be a non-empty string"
    if any(ord(char) < 0x20 or ord(char) == 0x7F or 0xD800 <= ord(char) <= 0xDFFF for char in path):
        return "a path must not contain control characters or lone surrogates"
    if "\\" in path or path.startswith("/") or unicodedata.normalize("NFC", path) != path:
        return "a path must be relative, use '/', and be NFC-normalised"
    segments = path.split("/")
    if any(segment in ("", ".", "..") for segment in segments):
        return "a path must not contain empty, '.' or '..' segments"
    if any(len(segment.encode()) > MAX_SEGMENT_BYTES for segment in segments):
        return "a path segment is longer than 255 bytes"
    if len(path.encode()) > MAX_PATH_BYTES:
        return "a path is longer than 1,024 bytes"
    return None


def _check_no_file_is_a_folder(paths: list[str]) -> None:
    folders = {"/".join(path.split("/")[:depth]) for path in paths for depth in range(1, path.count("/") + 1)}
    clash = folders.intersection(paths)
    if clash:
        raise WorkspaceBundleError("file_is_folder", f"{sorted(clash)[0]!r} is both a file and a folder.")


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
