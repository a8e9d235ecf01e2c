"""Turning a claim's verified input bytes into the directory a processor reads.

``project-bundle/v1`` archives are unpacked member by member: only regular
files named ``manifest.json`` or ``files/<relative path>``, no links, no
absolute or ``..`` paths, bounded count and size, files created exclusively
(never following a link), and every file checked against the manifest.
"""

import errno
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path, PurePosixPath

from quire_wire import PDF_VERSION_SCHEMA, PPTX_INPUT_SCHEMA, PROJECT_BUNDLE_SCHEMA
from quire_worker.contracts import FailureClass, ProcessorFailure

MAX_FILES = 5001
MAX_EXPANDED_BYTES = 512 * 1024 * 1024
INPUT_NAMES = {PPTX_INPUT_SCHEMA: "input.pptx", PDF_VERSION_SCHEMA: "input.pdf"}


def _invalid(message: str) -> ProcessorFailure:
    return ProcessorFailure(FailureClass.INVALID_INPUT, "unsafe_bundle", message)


def input_verify(data: bytes, *, sha256: str, size: int) -> None:
    if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
        raise ProcessorFailure(
            FailureClass.TRANSIENT_INFRASTRUCTURE,
            "input_digest_mismatch",
            "The downloaded input does not match.",
        )


def _safe_relative(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or not path.parts or any(part in ("", ".", "..") for part in path.parts) or "\\" in name:
        raise _invalid(f"Unsafe path in bundle: {name[:100]!r}")
    return path


def _write_exclusive(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(target, flags, 0o644), "wb") as stream:
        stream.write(data)


# Errors a malformed archive or manifest raises while it is read: wrong types, missing keys,
# undecodable or non-object JSON, an archive cut short.
_MALFORMED = (ValueError, KeyError, TypeError, AttributeError, RecursionError, tarfile.TarError)
# Errors the bundle's own names cause while it is written out: a file and a directory of the
# same name, a name too long. Other OS errors (a full disk) are the worker's, not the input's.
_NAME_CLASHES = (errno.EEXIST, errno.ENOTDIR, errno.EISDIR, errno.ENAMETOOLONG)


def bundle_unpack(data: bytes, destination: Path) -> dict:
    """Unpack a ``project-bundle/v1`` into ``destination``; return its manifest.

    Raises ProcessorFailure(invalid_input) for an unsafe, malformed or inconsistent bundle.
    """
    try:
        return _bundle_unpack(data, destination)
    except _MALFORMED as exc:
        raise _invalid("The bundle or its manifest is malformed.") from exc
    except OSError as exc:
        if exc.errno not in _NAME_CLASHES:
            raise
        raise _invalid("The bundle's file names cannot be laid out as a directory tree.") from exc


def _bundle_unpack(data: bytes, destination: Path) -> dict:
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:")  # noqa: SIM115  closed by the with below
    except tarfile.TarError as exc:
        raise _invalid("The input is not a bundle archive.") from exc
    with archive:
        contents = _members(archive)
    manifest = json.loads(contents.pop("manifest.json", b"{}") or b"{}")
    if not isinstance(manifest, dict):
        raise _invalid("The bundle's manifest is not an object.")
    declared = {entry["path"]: entry for entry in manifest.get("files", [])}
    if set(declared) != {name.removeprefix("files/") for name in contents}:
        raise _invalid("The manifest does not list exactly the bundle's files.")
    for name, content in contents.items():
        entry = declared[name.removeprefix("files/")]
        if entry["length"] != len(content) or entry["sha256"] != hashlib.sha256(content).hexdigest():
            raise _invalid(f"{name[:100]!r} does not match the manifest.")
        _write_exclusive(destination / _safe_relative(name), content)
    _write_exclusive(destination / "manifest.json", json.dumps(manifest).encode())
    return manifest


def _members(archive: tarfile.TarFile) -> dict[str, bytes]:
    contents: dict[str, bytes] = {}
    total = 0
    for count, member in enumerate(archive, start=1):
        if count > MAX_FILES or not member.isfile():
            raise _invalid("The bundle has too many entries or a non-file entry.")
        _safe_relative(member.name)
        total += member.size
        if total > MAX_EXPANDED_BYTES:
            raise _invalid("The bundle expands beyond the size limit.")
        if member.name != "manifest.json" and not member.name.startswith("files/"):
            raise _invalid(f"Unexpected entry {member.name[:100]!r}.")
        contents[member.name] = archive.extractfile(member).read()
    return contents


def input_materialize(data: bytes, *, schema: str, destination: Path) -> dict:
    """Lay the input out for the processor; returns the manifest for bundles, else {}."""
    destination.mkdir(parents=True, exist_ok=True)
    if schema == PROJECT_BUNDLE_SCHEMA:
        return bundle_unpack(data, destination)
    _write_exclusive(destination / INPUT_NAMES.get(schema, "input.bin"), data)
    return {}
