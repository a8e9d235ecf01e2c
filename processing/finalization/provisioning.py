"""Reading a worker's candidate ``workspace-bundle/v1`` before Workspace may turn it into a project.

The archive is untrusted: only regular files named ``manifest.json`` or
``files/<path>`` are accepted, counts and expanded size are bounded before any
member is read, and the manifest must describe exactly the files present.
Workspace then revalidates paths, kinds, sizes and the entry file itself.
"""

import hashlib
import io
import json
import tarfile

from processing.finalization.checks import staged_bytes_verified
from processing.finalization.publication import FinalizationRejected, Publication
from processing.models import FailureClass, StagedOutput
from quire_wire import WORKSPACE_BUNDLE_SCHEMA
from workspace import facade as workspace

SCHEMA = WORKSPACE_BUNDLE_SCHEMA
MAX_MEMBERS = 5001
MAX_EXPANDED_BYTES = 512 * 1024 * 1024
MAX_MANIFEST_BYTES = 4 * 1024 * 1024


def _rejected(message: str) -> FinalizationRejected:
    return FinalizationRejected(FailureClass.INTERNAL_CONTRACT_VIOLATION, "invalid_bundle", message)


def _members(archive: tarfile.TarFile) -> dict[str, tarfile.TarInfo]:
    members: dict[str, tarfile.TarInfo] = {}
    expanded = 0
    for count, member in enumerate(archive, start=1):
        if count > MAX_MEMBERS:
            raise _rejected("The bundle has too many files.")
        if not member.isfile():
            raise _rejected(f"The bundle holds a non-file entry {member.name[:100]!r}.")
        if member.name != "manifest.json" and not member.name.startswith("files/"):
            raise _rejected(f"Unexpected entry {member.name[:100]!r}.")
        if member.name in members:
            raise _rejected("The bundle names one file twice.")
        expanded += member.size
        if expanded > MAX_EXPANDED_BYTES:
            raise _rejected("The bundle expands beyond the size limit.")
        members[member.name] = member
    return members


def _manifest(archive: tarfile.TarFile, members: dict[str, tarfile.TarInfo]) -> dict:
    info = members.get("manifest.json")
    if info is None or info.size > MAX_MANIFEST_BYTES:
        raise _rejected("The bundle has no usable manifest.")
    try:
        manifest = json.loads(archive.extractfile(info).read())
    except (ValueError, UnicodeDecodeError) as exc:
        raise _rejected("The manifest is not JSON.") from exc
    if (
        not isinstance(manifest, dict)
        or manifest.get("schema") != SCHEMA
        or not isinstance(manifest.get("files"), list)
    ):
        raise _rejected(f"The manifest is not {SCHEMA}.")
    return manifest


def bundle_to_prepared_project(
    data: bytes, *, fallback_name: str, project_types: tuple[str, ...] = ("typst",)
) -> "workspace.PreparedProject":
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:")  # noqa: SIM115  closed by the with below
    except tarfile.TarError as exc:
        raise _rejected("The bundle is not a tar archive.") from exc
    with archive:
        members = _members(archive)
        manifest = _manifest(archive, members)
        if manifest.get("project_type") not in project_types:
            raise _rejected(f"The bundle's project type must be one of {', '.join(project_types)}.")
        declared = {item.get("path"): item for item in manifest["files"] if isinstance(item, dict)}
        present = {name.removeprefix("files/") for name in members if name != "manifest.json"}
        if set(declared) != present:
            raise _rejected("The manifest does not list exactly the files in the bundle.")
        files = []
        for path in sorted(present):
            content = archive.extractfile(members[f"files/{path}"]).read()
            entry = declared[path]
            if entry.get("length") != len(content) or entry.get("sha256") != hashlib.sha256(content).hexdigest():
                raise _rejected(f"{path[:100]!r} does not match the manifest.")
            files.append((path, content))
    try:
        return workspace.provision_prepare(
            name=str(manifest.get("suggested_name") or fallback_name.rsplit(".", 1)[0]),
            project_type=str(manifest.get("project_type", "")),
            entry_path=str(manifest.get("entry_path", "")),
            files=files,
        )
    except workspace.WorkspaceError as exc:
        raise _rejected(f"Workspace refused the bundle: {exc.message}") from exc


def provision_imported_project(job, staged: list[StagedOutput]) -> Publication:
    """The finalizer of imports: revalidate the candidate bundle and provision a new project in the publishing
    transaction."""
    by_role = {output.role: output for output in staged}
    for output in staged:
        staged_bytes_verified(job, output)
    prepared = bundle_to_prepared_project(bytes(by_role["bundle"].blob.data), fallback_name=job.input_filename)

    def provision(locked_job) -> dict:
        project_id = workspace.provision_commit(prepared=prepared, owner_id=locked_job.requester_id)
        return {"result_project_id": project_id}

    return Publication(publish=staged, before_publish=provision)
