"""Content no file and no live pin names is collected; a capture's pin keeps what it froze until released,
a dead preparation's pin is reaped after its deadline, and a writer reusing bytes never loses them."""

import os
import threading
import time
import uuid
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from tests.concurrency import run_together
from workspace import collector, services
from workspace.history.retention import history_prune
from workspace.models import OrphanedContent, Project, SnapshotPin, TextContent
from workspace.snapshots import pin_release, snapshot_contents, snapshot_freeze
from workspace.storage import FilesystemAssetStorage, asset_storage

pytestmark = pytest.mark.django_db

FIGURE = b"\x89PNG figure bytes only this test writes"
NOW = timedelta(0)  # a grace of nothing: only references keep content


def _write(owner, project, path: str, data: bytes) -> str:
    file, _ = services.file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=data)
    return file.sha256


def _history_forgotten() -> None:
    """The projects' history forgotten, as a retention of no time would: these tests are about what else keeps
    content (tests/workspace/history/test_retention.py: what history keeps)."""
    for project_id in Project.objects.values_list("pk", flat=True):
        history_prune(project_id=project_id, cutoff=timezone.now() + timedelta(days=1))


def _collect(grace=NOW) -> tuple[int, int]:
    _history_forgotten()
    return collector.text_contents_collect(grace=grace), collector.assets_collect(grace=grace)


def _frozen(project):
    with transaction.atomic():
        return snapshot_freeze(project_id=project.pk)


def test_deleting_an_asset_while_a_capture_holds_its_pin_keeps_its_bytes_until_release(owner, project):
    digest = _write(owner, project, "figure.png", FIGURE)
    snapshot = _frozen(project)
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="figure.png")

    _collect()

    assert asset_storage().exists(digest)  # the pin keeps it
    assert dict((file.path, data) for file, data in snapshot_contents(snapshot))["figure.png"] == FIGURE
    pin_release(pin_id=snapshot.pin_id)
    assert _collect() == (0, 1)
    assert not asset_storage().exists(digest)


def test_a_text_the_pin_froze_outlives_its_file_until_release(owner, project):
    digest = _write(owner, project, "gone.tex", b"\\section{Only here}")
    snapshot = _frozen(project)
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="gone.tex")

    _collect()
    assert TextContent.objects.filter(pk=digest).exists()

    pin_release(pin_id=snapshot.pin_id)
    _collect()
    assert not TextContent.objects.filter(pk=digest).exists()


def test_a_pin_left_by_a_preparation_that_died_is_reaped_after_its_deadline(owner, project):
    digest = _write(owner, project, "figure.png", FIGURE)
    snapshot = _frozen(project)  # and the preparation dies: nobody releases the pin
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="figure.png")
    live = SnapshotPin.objects.filter(pk=snapshot.pin_id)

    assert collector.pins_expired_reap() == 0 and live.exists()  # before its deadline
    live.update(created_at=timezone.now() - timedelta(hours=3), expires_at=timezone.now() - timedelta(hours=1))
    assert collector.pins_expired_reap() == 1 and not live.exists()
    _collect()
    assert not asset_storage().exists(digest)


def test_content_a_file_still_names_is_never_collected(owner, project):
    asset = _write(owner, project, "figure.png", FIGURE)
    text = _write(owner, project, "kept.tex", b"kept")

    assert _collect() == (0, 0)
    assert asset_storage().exists(asset) and TextContent.objects.filter(pk=text).exists()


def test_content_is_kept_for_the_grace_after_its_last_reference_went(owner, project):
    asset = _write(owner, project, "figure.png", FIGURE)
    text = _write(owner, project, "brief.tex", b"brief")
    for path in ("figure.png", "brief.tex"):
        services.file_delete(actor_id=owner.pk, project_id=project.pk, path=path)
    an_hour = timedelta(hours=1)

    assert _collect(an_hour) == (0, 0)  # just orphaned: a reader that looked the file up still finds it
    long_ago = timezone.now() - timedelta(hours=2)
    OrphanedContent.objects.update(orphaned_at=long_ago)
    TextContent.objects.filter(pk=text).update(created_at=long_ago)
    path = asset_storage()._path(asset)
    os.utime(path, (long_ago.timestamp(), long_ago.timestamp()))

    assert _collect(an_hour) == (1, 1)
    assert not asset_storage().exists(asset) and not TextContent.objects.filter(pk=text).exists()


def test_a_file_written_again_ends_its_contents_orphanhood(owner, project):
    _write(owner, project, "figure.png", FIGURE)
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="figure.png")
    _collect(timedelta(hours=1))
    assert OrphanedContent.objects.count() == 1

    _write(owner, project, "again.png", FIGURE)
    _collect(timedelta(hours=1))

    assert OrphanedContent.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_writer_reusing_bytes_the_collector_is_about_to_delete_keeps_them(owner, project, monkeypatch):
    """Real concurrency, the race made to happen: the collector has found the bytes orphaned for longer than
    its grace and is about to move them aside when a writer, on its own connection, stores the same bytes
    again (they exist: nothing is written) and commits a file naming them. The bytes must survive."""
    grace = timedelta(milliseconds=300)
    decided, reused = threading.Event(), threading.Event()
    condemn = FilesystemAssetStorage.condemn

    def condemn_once_the_writer_reused(storage, digest):
        decided.set()
        reused.wait(timeout=10)
        return condemn(storage, digest)

    monkeypatch.setattr(FilesystemAssetStorage, "condemn", condemn_once_the_writer_reused)
    digest = _write(owner, project, "figure.png", FIGURE)
    services.file_delete(actor_id=owner.pk, project_id=project.pk, path="figure.png")
    _history_forgotten()
    collector.assets_collect(grace=grace)  # marks the bytes orphaned
    OrphanedContent.objects.update(orphaned_at=timezone.now() - timedelta(hours=1))  # for longer than the grace
    os.utime(asset_storage()._path(digest), (time.time() - 1, time.time() - 1))  # and stored as long ago
    outcome = {}

    def collect():
        outcome["collected"] = collector.assets_collect(grace=grace)

    def write_again():
        assert decided.wait(timeout=10), "the collector never chose the bytes"
        prepared = services.content_prepare(path="again.png", data=FIGURE)  # reused, not written
        reused.set()
        time.sleep(0.05)  # a request between storing its bytes and committing its file
        services.content_commit(project_id=project.pk, prepared=prepared)

    errors = run_together(collect, write_again)

    assert errors == []
    assert outcome["collected"] == 0
    assert asset_storage().read(digest) == FIGURE


def _output_published(project, digest: str, size: int, *, generation: int) -> None:
    from workspace import facade

    files = (facade.OutputFile("pdf", "application/pdf", "main.pdf", size, digest),)
    output = facade.BuildOutput(uuid.uuid4(), "latex.compile.pdf/v1", project.created_by_id, generation, [], None,
                                [], "", files)  # fmt: skip
    with transaction.atomic():
        assert facade.output_publish(project_id=project.pk, output=output)


def test_the_bytes_of_the_projects_output_are_kept_until_a_newer_output_replaces_it(project):
    from workspace import facade

    first = facade.output_content_store(data=b"%PDF first output only")
    _output_published(project, first, 22, generation=1)

    assert _collect() == (0, 0)
    assert asset_storage().exists(first)

    second = facade.output_content_store(data=b"%PDF second output only")
    _output_published(project, second, 23, generation=2)
    _collect()

    assert not asset_storage().exists(first) and asset_storage().exists(second)
