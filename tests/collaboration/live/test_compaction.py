"""Compaction folds a document's log into its snapshot: nothing anyone reads may change.

What is read: the text from the log alone (``projection_read``), Workspace's text, the bundle a capture builds,
and the state an editor connecting afterwards is given.
"""

import asyncio
import io
import tarfile
from datetime import timedelta

import pytest
from pycrdt import Doc, Text

from collaboration import services
from collaboration.models import DocumentLog
from collaboration.services import Submitted
from processing.submission.capture import project_capture
from tests.collaboration.live.helpers import (
    close_all,
    connect,
    eventually,
    file_id_of,
    run,
    stored_text,
    update_rows,
    workspace_row,
    workspace_row_text,
)
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db(transaction=True)


def _bundled_text(bundle, path: str = "main.tex") -> str:
    with tarfile.open(fileobj=io.BytesIO(bundle.data)) as archive:
        return archive.extractfile(f"files/{path}").read().decode("utf-8")


def _workspace_text(server, user, project) -> str:
    return server.api(user).get(server.file_url(project), timeout=10).text


async def _type(client, words: list[str]) -> None:
    for word in words:
        for char in word:
            client.insert(len(client.text) - len("\\end{document}\n"), char)
            await asyncio.sleep(0.002)
    await client.wait_until(client.saved)


def test_compaction_changes_no_text_no_capture_and_no_editor_state(server, owner, project):
    file_id = file_id_of(project)

    async def scenario():
        alice = later = None
        try:
            alice = await connect(server, owner, project)
            await _type(alice, ["Folded ", "into ", "the ", "snapshot.\n"])
            await eventually(lambda: workspace_row_text(file_id) == alice.text, what="the projection")
            text, row, rows = alice.text, workspace_row(file_id), update_rows(file_id)
            assert rows > 4
            captured = project_capture(project_id=project.pk).bundle
            assert _bundled_text(captured) == text

            assert services.log_compact(file_id=file_id) == rows
            assert update_rows(file_id) == 0
            log = DocumentLog.objects.get(file_id=file_id)
            assert log.snapshot_seq == log.last_seq
            assert stored_text(file_id) == text
            assert (workspace_row(file_id).version, workspace_row(file_id).sha256) == (row.version, row.sha256)
            again = project_capture(project_id=project.pk).bundle
            assert (again.sha256, again.data) == (captured.sha256, captured.data)

            later = await connect(server, owner, project)
            assert later.text == text

            # Editing goes on over the compacted log, and the periodic compaction folds it again.
            await _type(alice, ["More ", "after."])
            await later.wait_until(lambda: later.text == alice.text)
            await eventually(lambda: _workspace_text(server, owner, project) == alice.text, what="the projection")
            text = alice.text
            captured = project_capture(project_id=project.pk).bundle
            assert update_rows(file_id) > 0
            assert services.logs_compact_due(quiet_for=timedelta(0)) == 1
            assert update_rows(file_id) == 0
            assert stored_text(file_id) == text == _workspace_text(server, owner, project)
            assert project_capture(project_id=project.pk).bundle.data == captured.data
            latest = await connect(server, owner, project)
            assert latest.text == text
            await latest.close()
        finally:
            await close_all(alice, later)

    run(scenario())


def test_compacting_updates_not_yet_projected_loses_none_of_them(server, owner):
    project = ProjectFactory(owner=owner, starter=True)
    file_id = file_id_of(project)
    state = services.state_read(actor_id=owner.pk, project_id=project.pk, path="main.tex")
    doc = Doc()
    doc["content"] = Text()
    doc.apply_update(state)
    for word in ["never ", "projected ", "yet "]:
        before = doc.get_state()
        doc["content"].insert(0, word)
        stored = services.updates_accept(
            project_id=project.pk, file_id=file_id, submitted=[Submitted(owner.pk, doc.get_update(before))]
        )
        assert stored.changed
    expected = str(doc["content"])
    assert workspace_row_text(file_id) != expected, "stored, not projected (as while editors type)"

    assert services.log_compact(file_id=file_id) > 0
    assert update_rows(file_id) == 0
    assert stored_text(file_id) == expected
    assert _bundled_text(project_capture(project_id=project.pk).bundle) == expected
    assert _workspace_text(server, owner, project) == expected

    async def scenario():
        # This server process never had the document: it builds it from the compacted log.
        client = await connect(server, owner, project)
        try:
            assert client.text == expected
        finally:
            await client.close()

    run(scenario())
