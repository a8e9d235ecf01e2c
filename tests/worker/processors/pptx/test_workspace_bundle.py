"""workspace-bundle/v1: the import's output format is deterministic and its reader trusts nothing."""

import hashlib
import io
import json
import tarfile

import pytest

from quire_worker.processors.workspace_bundle import (
    BundleFile,
    WorkspaceBundle,
    WorkspaceBundleError,
    bundle_bytes,
    read_bundle,
)

PROJECT = WorkspaceBundle(
    project_type="typst",
    suggested_name="Quarterly review",
    entry_path="main.typ",
    files=(
        BundleFile("main.typ", "text", b"= Hello\n"),
        BundleFile("assets/image-01.png", "asset", b"\x89PNG"),
    ),
)


def read(data: bytes, tmp_path, **bounds):
    path = tmp_path / "bundle.tar"
    path.write_bytes(data)
    return read_bundle(path, max_files=bounds.get("max_files", 10), max_expanded_bytes=bounds.get("max_bytes", 10**6))


def tar_of(members: list[tuple[str, bytes]], *, symlink: str | None = None) -> bytes:
    output = io.BytesIO()
    with tarfile.open(fileobj=output, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        if symlink:
            info = tarfile.TarInfo(symlink)
            info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
            archive.addfile(info)
    return output.getvalue()


def manifest_for(files: dict[str, bytes], **overrides) -> bytes:
    records = [
        {
            "path": path,
            "kind": "text" if path.endswith(".typ") else "asset",
            "length": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        for path, data in sorted(files.items())
    ]
    manifest = {
        "schema": "workspace-bundle/v1",
        "project_type": "typst",
        "suggested_name": "x",
        "entry_path": "main.typ",
        "files": records,
    } | overrides
    return json.dumps(manifest).encode()


def rejection(members, tmp_path, **bounds) -> str:
    with pytest.raises(WorkspaceBundleError) as raised:
        read(tar_of(members), tmp_path, **bounds)
    return raised.value.code


def test_the_same_project_always_gives_the_same_archive_bytes(tmp_path):
    reordered = WorkspaceBundle(PROJECT.project_type, PROJECT.suggested_name, PROJECT.entry_path, PROJECT.files[::-1])

    assert bundle_bytes(PROJECT) == bundle_bytes(reordered)


def test_an_archive_reads_back_as_the_project_it_was_written_from(tmp_path):
    bundle = read(bundle_bytes(PROJECT), tmp_path)

    assert bundle.entry_path == "main.typ" and bundle.suggested_name == "Quarterly review"
    assert sorted(bundle.files, key=lambda item: item.path) == sorted(PROJECT.files, key=lambda item: item.path)


def test_the_manifest_comes_first_and_members_carry_no_host_metadata(tmp_path):
    with tarfile.open(fileobj=io.BytesIO(bundle_bytes(PROJECT))) as archive:
        members = archive.getmembers()

    assert [member.name for member in members] == [
        "manifest.json",
        "files/assets/image-01.png",
        "files/main.typ",
    ]
    assert {(member.mtime, member.uid, member.gid, member.uname, member.mode) for member in members} == {
        (0, 0, 0, "", 0o644)
    }


@pytest.mark.parametrize("path", ["../escape.typ", "/etc/passwd", "a//b.typ", "a/./b.typ", "back\\slash.typ"])
def test_paths_that_leave_or_bend_the_project_are_refused(path, tmp_path):
    files = {"main.typ": b"x", path: b"y"}

    code = rejection([("manifest.json", manifest_for(files)), *((f"files/{p}", d) for p, d in files.items())], tmp_path)

    assert code == "bad_path"


def test_content_that_does_not_match_its_digest_is_refused(tmp_path):
    manifest = manifest_for({"main.typ": b"original"})

    assert rejection([("manifest.json", manifest), ("files/main.typ", b"tampered")], tmp_path) == "digest_mismatch"


def test_members_missing_from_the_manifest_are_refused(tmp_path):
    members = [
        ("manifest.json", manifest_for({"main.typ": b"x"})),
        ("files/main.typ", b"x"),
        ("files/extra", b"y"),
    ]

    assert rejection(members, tmp_path) == "unlisted_member"


def test_a_symlink_member_is_refused(tmp_path):
    data = tar_of([("manifest.json", manifest_for({"main.typ": b"x"})), ("files/main.typ", b"x")], symlink="files/l")

    with pytest.raises(WorkspaceBundleError) as raised:
        read(data, tmp_path)

    assert raised.value.code == "not_a_regular_file"


def test_a_bundle_without_its_entry_file_is_refused(tmp_path):
    members = [("manifest.json", manifest_for({"other.typ": b"x"})), ("files/other.typ", b"x")]

    assert rejection(members, tmp_path) == "entry_missing"


def test_too_many_bytes_are_refused_before_they_are_read(tmp_path):
    members = [("manifest.json", manifest_for({"main.typ": b"x" * 5000})), ("files/main.typ", b"x" * 5000)]

    assert rejection(members, tmp_path, max_bytes=4096) == "too_large"
