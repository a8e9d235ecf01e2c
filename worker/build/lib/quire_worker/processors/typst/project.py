"""Reads an unpacked ``project-bundle/v1`` of a Typst project, trusting nothing in it.

The agent verified the archive's digests before unpacking; this still checks what the
export relies on: a Typst project, a canonical path for every file, no symlinks, and an
entry file that exists.
"""

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from quire_wire import PROJECT_BUNDLE_SCHEMA
from quire_worker.processors.child_protocol import ConversionFailure
from quire_worker.processors.workspace_bundle import path_problem

SCHEMA = PROJECT_BUNDLE_SCHEMA
MAX_MANIFEST_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class TypstProject:
    files_root: Path
    entry_path: str
    typst_paths: list[str]
    source_epoch: int

    @property
    def entry_file(self) -> Path:
        return self.files_root / self.entry_path

    @property
    def title(self) -> str:
        return PurePosixPath(self.entry_path).stem


def _invalid(code: str, message: str) -> ConversionFailure:
    return ConversionFailure("invalid_input", code, message)


def read_project(input_dir: Path) -> TypstProject:
    manifest = _manifest(input_dir / "manifest.json")
    files_root = (input_dir / "files").resolve()
    if (input_dir / "files").is_symlink() or not files_root.is_dir():
        raise _invalid("files_missing", "The project bundle has no files/ folder.")
    _refuse_symlinks(files_root)
    paths = [_checked_file(record, files_root) for record in manifest["files"]]
    entry_path = manifest.get("entry_path")
    if entry_path not in paths or not str(entry_path).endswith(".typ"):
        raise _invalid("entry_missing", f"The entry file {entry_path!r} is not a Typst file of the project.")
    typst_paths = sorted(path for path in paths if path.endswith(".typ"))
    return TypstProject(files_root, entry_path, typst_paths, _epoch(manifest.get("source_epoch")))


def _manifest(path: Path) -> dict:
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_MANIFEST_BYTES:
        raise _invalid("manifest_missing", "The project bundle has no usable manifest.json.")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _invalid("manifest_invalid", "The project bundle's manifest.json is not JSON.") from exc
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        raise _invalid("wrong_schema", f"The input is not a {SCHEMA}.")
    if manifest.get("project_type") != "typst":
        raise _invalid("wrong_project_type", "Only Typst projects can be exported to PPTX.")
    if not isinstance(manifest.get("files"), list):
        raise _invalid("manifest_invalid", "The manifest has no file list.")
    return manifest


def _refuse_symlinks(root: Path) -> None:
    for folder, directories, files in os.walk(root):
        for name in directories + files:
            if (Path(folder) / name).is_symlink():
                raise _invalid("symlink", "The project bundle contains a symbolic link.")


def _checked_file(record, files_root: Path) -> str:
    path = record.get("path") if isinstance(record, dict) else None
    problem = path_problem(path)
    if problem:
        raise _invalid("bad_path", f"The manifest names an invalid path ({problem}).")
    target = files_root / path
    if not target.is_file() or target.stat().st_size != record.get("length"):
        raise _invalid("file_mismatch", f"{path!r} is missing or does not match the manifest.")
    return path


def _epoch(raw) -> int:
    """The manifest's stable source epoch as UNIX seconds (0 when absent)."""
    if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0:
        return raw
    if isinstance(raw, str):
        try:
            return max(int(datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()), 0)
        except ValueError:
            pass
    return 0
