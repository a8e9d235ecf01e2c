import io
import json
import tarfile
import threading

import pytest
from django.db import connection

from processing.kernel.bundles import BundleFile, bundle_build, manifest_build
from processing.submission import capture as capture_module
from processing.submission.capture import project_capture
from tests.factories import ProjectFactory
from workspace import services as workspace_services
from workspace.models import SnapshotPin

FILES = {
    "main.tex": b"\\documentclass{article}\\begin{document}\\input{chapters/one}\\end{document}",
    "chapters/one.tex": "Grüße".encode(),
    "figures/plot.png": b"\x89PNG\r\n\x1a\n" + bytes(range(256)),
    "refs.bib": b"@book{k, title={T}}",
}


def _project_with(owner, order):
    project = ProjectFactory(owner=owner)
    for path in order:
        workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=FILES[path])
    return project


def _members(data: bytes) -> list[tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return archive.getmembers()


def _read(data: bytes, name: str) -> bytes:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return archive.extractfile(name).read()


def _contents(data: bytes) -> dict[str, str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return {m.name: archive.extractfile(m).read().decode() for m in archive.getmembers()[1:]}


@pytest.mark.django_db
def test_two_captures_of_the_same_generation_are_byte_identical(owner):
    project = _project_with(owner, list(FILES))
    first, second = project_capture(project_id=project.pk), project_capture(project_id=project.pk)
    assert first.bundle.data == second.bundle.data
    assert first.bundle.sha256 == second.bundle.sha256


@pytest.mark.django_db
def test_capture_releases_its_pin(owner):
    project = _project_with(owner, ["main.tex"])
    project_capture(project_id=project.pk)
    assert not SnapshotPin.objects.exists()


@pytest.mark.django_db
def test_the_bundle_layout_and_manifest(owner):
    project = _project_with(owner, list(FILES))
    bundle = project_capture(project_id=project.pk).bundle
    members = _members(bundle.data)
    assert [member.name for member in members] == ["manifest.json", *[f"files/{p}" for p in sorted(FILES)]]
    assert {(member.mtime, member.uid, member.gid, member.mode) for member in members} == {(0, 0, 0, 0o644)}
    manifest = json.loads(_read(bundle.data, "manifest.json"))
    assert manifest["schema"] == "project-bundle/v1"
    assert manifest["project_type"] == "latex" and manifest["settings"] == {"compiler": "pdflatex"}
    assert [file["path"] for file in manifest["files"]] == sorted(FILES)
    assert {"kind", "length", "sha256"} <= set(manifest["files"][0])
    assert isinstance(manifest["source_epoch"], int) and manifest["content_generation"] == len(FILES)
    assert not any("job" in key for key in manifest)


def test_bundles_do_not_depend_on_insertion_order():
    def build(order):
        files = [BundleFile.of(path, "asset" if path.endswith(".png") else "text", FILES[path]) for path in order]
        manifest = manifest_build(
            project_type="latex",
            entry_path="main.tex",
            settings={"compiler": "pdflatex"},
            generation=4,
            source_epoch=1_700_000_000,
            files=files,
        )
        return bundle_build(manifest, files)

    forward, backward = build(list(FILES)), build(list(reversed(FILES)))
    assert forward.data == backward.data and forward.sha256 == backward.sha256


@pytest.mark.django_db
def test_the_same_files_added_in_another_order_give_the_same_file_records(owner):
    one = project_capture(project_id=_project_with(owner, list(FILES)).pk).bundle.manifest
    two = project_capture(project_id=_project_with(owner, list(reversed(FILES))).pk).bundle.manifest
    assert one["files"] == two["files"] and one["content_generation"] == two["content_generation"]


@pytest.mark.django_db(transaction=True)
def test_capture_under_continuous_editing_is_always_one_generation(owner):
    project = ProjectFactory(owner=owner)
    stop = threading.Event()
    errors: list[BaseException] = []

    def edit_forever():
        try:
            k = 0
            while not stop.is_set():
                k += 1
                path = "odd.tex" if k % 2 else "even.tex"
                workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=str(k).encode())
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    writer = threading.Thread(target=edit_forever)
    writer.start()
    try:
        captures = [project_capture(project_id=project.pk) for _ in range(25)]
    finally:
        stop.set()
        writer.join()

    assert not errors
    for capture in captures:
        k = capture.bundle.manifest["content_generation"]
        contents = _contents(capture.bundle.data)
        expected = {}
        if k >= 1:
            expected["files/odd.tex"] = str(k if k % 2 else k - 1)
        if k >= 2:
            expected["files/even.tex"] = str(k if k % 2 == 0 else k - 1)
        assert contents == expected


@pytest.mark.django_db(transaction=True)
def test_edits_proceed_while_the_bundle_is_being_built(owner, monkeypatch):
    """The fence is released before bytes are read and archived: an edit completes during bundle building."""
    project = _project_with(owner, ["main.tex"])
    edit_done = threading.Event()
    real_build = capture_module.bundle_build

    def build_while_someone_edits(manifest, files):
        def edit():
            try:
                workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=b"new")
                edit_done.set()
            finally:
                connection.close()

        editor = threading.Thread(target=edit)
        editor.start()
        editor.join(timeout=30)
        assert edit_done.is_set(), "an edit was blocked while the bundle was being built"
        return real_build(manifest, files)

    monkeypatch.setattr(capture_module, "bundle_build", build_while_someone_edits)
    captured = project_capture(project_id=project.pk)

    assert edit_done.is_set()
    assert _read(captured.bundle.data, "files/main.tex") == FILES["main.tex"]


@pytest.mark.django_db
def test_a_build_records_which_document_versions_it_captured(owner, owner_client, configure_deployment):
    from processing.models import ProcessingJob
    from processing.ui.task_center import task_row_for
    from tests.processing.conftest import submit_build

    configure_deployment()
    project = _project_with(owner, ["main.tex", "chapters/one.tex", "figures/plot.png"])
    workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=b"\\relax v2")

    response = submit_build(owner_client, project)

    job = ProcessingJob.objects.get(pk=response.json()["id"])
    assert job.captured["documents"] == [["chapters/one.tex", 1], ["main.tex", 2]]  # text documents only
    assert response.json()["captured"]["documents"] == [
        {"path": "chapters/one.tex", "version": 1},
        {"path": "main.tex", "version": 2},
    ]
    assert task_row_for(user_id=owner.pk, job_id=job.pk).captured_text == "Captured chapters/one.tex v1, main.tex v2"
