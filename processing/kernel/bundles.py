"""``project-bundle/v1``: the deterministic archive a project build or export runs on.

A POSIX (pax) tar holding ``manifest.json`` first and then ``files/<path>`` in
path order. Every header field that could vary (mtime, owner, mode) is fixed,
so the same content gives byte-identical archives and the same
``input_digest`` regardless of insertion order, host or time. The manifest
carries no job ids or wall-clock times; its ``source_epoch`` is the time of
the snapshot's last content change, stable for a generation.
"""

import hashlib
import io
import json
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass

from quire_wire import PROJECT_BUNDLE_SCHEMA

SCHEMA = PROJECT_BUNDLE_SCHEMA
WORKSPACE_VERSION = "quire-workspace/1"
ARCHIVE_MTIME = 0


@dataclass(frozen=True)
class BundleFile:
    path: str
    kind: str
    data: bytes
    sha256: str  # already verified by whoever read the bytes

    @classmethod
    def of(cls, path: str, kind: str, data: bytes) -> "BundleFile":
        return cls(path, kind, data, hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class Bundle:
    data: bytes
    sha256: str
    manifest: dict


def canonical_json(value) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def manifest_build(
    *,
    project_type: str,
    entry_path: str,
    settings: dict,
    generation: int,
    source_epoch: int,
    files: Iterable[BundleFile],
) -> dict:
    return {
        "schema": SCHEMA,
        "project_type": project_type,
        "entry_path": entry_path,
        "settings": settings,
        "workspace_version": WORKSPACE_VERSION,
        "content_generation": generation,
        "source_epoch": source_epoch,
        "files": [
            {"path": file.path, "kind": file.kind, "length": len(file.data), "sha256": file.sha256}
            for file in sorted(files, key=lambda item: item.path)
        ],
    }


def _add(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = ARCHIVE_MTIME
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    archive.addfile(info, io.BytesIO(data))


def bundle_build(manifest: dict, files: Iterable[BundleFile]) -> Bundle:
    by_path = {file.path: file for file in files}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        _add(archive, "manifest.json", canonical_json(manifest))
        for path in sorted(by_path):
            _add(archive, f"files/{path}", by_path[path].data)
    data = buffer.getvalue()
    return Bundle(data=data, sha256=hashlib.sha256(data).hexdigest(), manifest=manifest)
