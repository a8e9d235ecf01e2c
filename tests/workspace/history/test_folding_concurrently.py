"""Folding while others write and fold: every change is folded once, in order, and the newest version holds the
files exactly as they are. Real threads on their own connections."""

import pytest

from tests.concurrency import run_together
from workspace import services
from workspace.history import folding, reading
from workspace.history.models import FileChange, VersionChange
from workspace.models import ProjectFile

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 30


def test_writers_and_folders_at_once_lose_and_repeat_nothing(owner, project):
    paths = ["a.tex", "b.tex", "c.tex"]

    def writer(path: str):
        def write():
            for index in range(ROUNDS):
                services.file_write(
                    actor_id=owner.pk, project_id=project.pk, path=path, data=f"{path} {index}\n".encode()
                )

        return write

    def folder():
        for _ in range(ROUNDS):
            folding.history_fold(project_id=project.pk)

    errors = run_together(*(writer(path) for path in paths), folder, folder)
    newest = folding.history_fold(project_id=project.pk)

    assert errors == []
    assert not FileChange.objects.filter(project_id=project.pk).exists()
    state = reading.state_at(project_id=project.pk, number=newest.number)
    current = {file.pk: (file.path, file.sha256) for file in ProjectFile.objects.filter(project=project)}
    assert {file_id: (item.path, item.sha256) for file_id, item in state.items()} == current
    assert VersionChange.objects.filter(project_id=project.pk, path__in=paths).count() == len(paths)
