"""The project mutation fence, proven with real concurrent connections."""

import threading

import pytest
from django.db import connection, transaction

from tests.concurrency import backend_waiting_on_lock
from tests.factories import ProjectFactory
from workspace import services
from workspace.models import Project
from workspace.snapshots import pin_release, snapshot_contents, snapshot_freeze

pytestmark = pytest.mark.django_db(transaction=True)


def _run(target, errors):
    def wrapped():
        try:
            target()
        except BaseException as exc:  # surfaced by the test thread
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=wrapped)
    thread.start()
    return thread


def test_a_writer_waits_while_a_snapshot_holds_the_fence(owner):
    project = ProjectFactory(owner=owner, starter=True)
    frozen, release = threading.Event(), threading.Event()
    writer_pid: list[int] = []
    order: list[str] = []
    errors: list[BaseException] = []

    def snapshot():
        with transaction.atomic():
            snap = snapshot_freeze(project_id=project.pk)
            frozen.set()
            release.wait(timeout=30)
            order.append(f"snapshot committed at generation {snap.generation}")

    def writer():
        writer_pid.append(connection.cursor().connection.info.backend_pid)
        services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=b"edited")
        order.append("write committed")

    holder = _run(snapshot, errors)
    assert frozen.wait(timeout=30)
    generation = Project.objects.get(pk=project.pk).generation
    write = _run(writer, errors)
    # The database itself says when the writer is blocked on the fence: no sleeping.
    while not (writer_pid and backend_waiting_on_lock(writer_pid[0])):
        assert write.is_alive(), errors
    assert order == []
    release.set()
    holder.join(timeout=30)
    write.join(timeout=30)

    assert not errors
    assert order == [f"snapshot committed at generation {generation}", "write committed"]
    assert Project.objects.get(pk=project.pk).generation == generation + 1


def test_a_snapshot_taken_during_continuous_edits_is_exactly_one_generation(owner):
    project = ProjectFactory(owner=owner)
    base = Project.objects.get(pk=project.pk).generation
    stop = threading.Event()
    errors: list[BaseException] = []

    def edit_forever():
        # Edit k (k = 1, 2, …) writes "k" to odd.tex or even.tex: generation base+k fixes both contents.
        k = 0
        while not stop.is_set():
            k += 1
            path = "odd.tex" if k % 2 else "even.tex"
            services.file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=str(k).encode())

    writer = _run(edit_forever, errors)
    observed = []
    try:
        for _ in range(40):
            with transaction.atomic():
                snap = snapshot_freeze(project_id=project.pk)
            contents = {file.path: data.decode() for file, data in snapshot_contents(snap)}
            pin_release(pin_id=snap.pin_id)
            observed.append((snap.generation - base, contents))
    finally:
        stop.set()
        writer.join(timeout=60)

    assert not errors
    assert any(k > 2 for k, _ in observed), "the writer made progress while snapshots were taken"
    for k, contents in observed:
        expected = {}
        if k >= 1:
            expected["odd.tex"] = str(k if k % 2 else k - 1)
        if k >= 2:
            expected["even.tex"] = str(k if k % 2 == 0 else k - 1)
        assert contents == expected, f"snapshot at edit {k} mixes generations: {contents}"
