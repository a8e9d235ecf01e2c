"""Unpacking a claim's input: a malformed or inconsistent bundle is the input's fault, never a transient one."""

import pytest

from quire_worker.contracts import FailureClass, ProcessorFailure
from quire_worker.testing import bundle_archive, manifest_record
from quire_worker.unpack import input_materialize

MAIN = b"\\documentclass{article}"


def unpack_failure(data: bytes, tmp_path) -> ProcessorFailure:
    with pytest.raises(ProcessorFailure) as raised:
        input_materialize(data, schema="project-bundle/v1", destination=tmp_path / "input")
    return raised.value


def test_a_consistent_bundle_unpacks_its_files_and_manifest(tmp_path):
    manifest = input_materialize(
        bundle_archive({"main.tex": MAIN}), schema="project-bundle/v1", destination=tmp_path / "input"
    )

    assert [entry["path"] for entry in manifest["files"]] == ["main.tex"]
    assert (tmp_path / "input" / "files" / "main.tex").read_bytes() == MAIN


@pytest.mark.parametrize(
    "manifest",
    [
        b"{not json",
        b"\xff\xfe",
        b"[]",
        b'"a string"',
        {"files": "main.tex"},
        {"files": ["main.tex"]},
        {"files": [{"path": "main.tex", "sha256": manifest_record("main.tex", MAIN)["sha256"]}]},
        {"files": [{"path": "main.tex", "length": len(MAIN)}]},
        {"files": [{"length": len(MAIN), "sha256": manifest_record("main.tex", MAIN)["sha256"]}]},
    ],
    ids=[
        "not-json",
        "not-utf8",
        "a-list",
        "a-string",
        "files-not-a-list",
        "entries-not-objects",
        "no-length",
        "no-sha256",
        "no-path",
    ],
)
def test_a_malformed_manifest_is_invalid_input(tmp_path, manifest):
    failure = unpack_failure(bundle_archive({"main.tex": MAIN}, manifest=manifest), tmp_path)

    assert failure.failure_class == FailureClass.INVALID_INPUT


@pytest.mark.parametrize("order", [["a", "a/b"], ["a/b", "a"]], ids=["file-first", "directory-first"])
def test_a_file_and_a_directory_of_the_same_name_are_invalid_input(tmp_path, order):
    files = {path: b"x" for path in order}

    failure = unpack_failure(bundle_archive(files), tmp_path)

    assert failure.failure_class == FailureClass.INVALID_INPUT


def test_a_truncated_archive_is_invalid_input(tmp_path):
    archive = bundle_archive({"main.tex": MAIN * 1000})

    failure = unpack_failure(archive[:2048], tmp_path)  # cut inside main.tex's data

    assert failure.failure_class == FailureClass.INVALID_INPUT
