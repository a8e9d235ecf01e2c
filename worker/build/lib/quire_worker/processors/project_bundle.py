"""Reading an unpacked ``project-bundle/v1``: its manifest and its files, as a processor needs them.

The agent has already checked the archive, the digests and the paths while unpacking; this
module still refuses anything it would not want to hand to a compiler, and answers with
``invalid_input`` failures.
"""

import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from quire_wire import PROJECT_BUNDLE_SCHEMA
from quire_worker.contracts import FailureClass, ProcessorFailure

SCHEMA = PROJECT_BUNDLE_SCHEMA
# latexmk hands the entry to its tools through a shell, so its name keeps to characters no
# shell or TeX gives a meaning to: letters and digits of any script, space, . _ - + , @ and /;
# every part starts with a letter or digit, so it never reads as an option or a hidden file.
SAFE_ENTRY_PATH = re.compile(r"\w[\w.+,@ -]*(/\w[\w.+,@ -]*)*")


@dataclass(frozen=True)
class ProjectBundle:
    root: Path
    project_type: str
    entry_path: str
    settings: dict
    source_epoch: int
    file_paths: tuple[str, ...]
    manifest_sha256: str

    def copy_files_to(self, destination: Path) -> None:
        """Copy exactly the files the manifest lists (no links, nothing else) into ``destination``."""
        destination.mkdir(parents=True, exist_ok=True)
        for relative in self.file_paths:
            source = self.root / "files" / relative
            if source.is_symlink() or not source.is_file():
                raise _invalid("bundle_file_missing", f"the bundle lacks the file {relative!r} its manifest lists")
            target = destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def read_project_bundle(input_dir: Path, *, project_type: str) -> ProjectBundle:
    """The bundle in ``input_dir``; ProcessorFailure(invalid_input) when it is not a usable one."""
    try:
        manifest_bytes = (input_dir / "manifest.json").read_bytes()
        manifest = json.loads(manifest_bytes)
    except (OSError, ValueError) as exc:
        raise _invalid("bad_manifest", f"the bundle has no readable manifest.json: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("schema") != SCHEMA:
        raise _invalid("bad_manifest", f"the input is not a {SCHEMA} bundle")
    if manifest.get("project_type") != project_type:
        raise _invalid("wrong_project_type", f"this operation builds {project_type} projects only")
    file_paths = tuple(_safe_relative(record.get("path")) for record in manifest.get("files") or ())
    entry_path = manifest.get("entry_path")
    if not isinstance(entry_path, str) or not SAFE_ENTRY_PATH.fullmatch(entry_path):
        raise _invalid("unsafe_entry_path", f"the entry path {entry_path!r} is not a plain relative file name")
    if entry_path not in file_paths:
        raise _invalid("entry_missing", f"the entry file {entry_path} is not part of the project")
    return ProjectBundle(
        root=input_dir,
        project_type=project_type,
        entry_path=entry_path,
        settings=manifest.get("settings") or {},
        source_epoch=_source_epoch(manifest.get("source_epoch")),
        file_paths=file_paths,
        manifest_sha256=hashlib.sha256(manifest_bytes).hexdigest(),
    )


def _safe_relative(path: object) -> str:
    pure = PurePosixPath(path) if isinstance(path, str) else None
    if pure is None or pure.is_absolute() or ".." in pure.parts or str(pure) != path:
        raise _invalid("bad_manifest", f"the manifest lists an unsafe path {path!r}")
    return path


def _source_epoch(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _invalid("bad_manifest", f"the manifest's source_epoch {value!r} is not a time in seconds")
    return value


def _invalid(code: str, message: str) -> ProcessorFailure:
    return ProcessorFailure(FailureClass.INVALID_INPUT, code, message)
