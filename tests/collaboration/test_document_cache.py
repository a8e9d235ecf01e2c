"""The per-process cache of document states: exact for the sequence it names, brought forward from the log."""

import pytest
from pycrdt import Doc

from collaboration import log as document_log
from collaboration.models import DocumentLog
from collaboration.services import Submitted, updates_accept
from collaboration.ydoc import ROOT, doc_build, doc_text
from workspace.models import ProjectFile

pytestmark = pytest.mark.django_db


def _typed(state: bytes, text: str) -> bytes:
    doc = doc_build(state, [])
    before = doc.get_state()
    doc[ROOT].insert(0, text)
    return doc.get_update(before)


def _store(owner, project, file_id: int, text: str) -> None:
    log = DocumentLog.objects.filter(file_id=file_id).first()
    state = document_log.log_doc(log).get_update() if log else b""
    if log is None:  # the first update starts from Workspace's text, as every editor's does
        from collaboration.services import live_diff

        state = live_diff(project_id=project.pk, file_id=file_id, state_vector=b"\x00")
    updates_accept(project_id=project.pk, file_id=file_id, submitted=[Submitted(owner.pk, _typed(state, text))])


def test_an_older_cached_state_is_brought_forward_by_the_updates_stored_since(owner, project):
    file_id = ProjectFile.objects.get(project=project, path="main.tex").pk
    _store(owner, project, file_id, "first ")
    older = document_log.documents.take(file_id, DocumentLog.objects.get(file_id=file_id).last_seq)
    assert isinstance(older, Doc)
    seq_before = DocumentLog.objects.get(file_id=file_id).last_seq
    _store(owner, project, file_id, "second ")
    document_log.documents.drop(file_id)  # as if another process had stored it: this one's cache is behind
    document_log.documents.put(file_id, seq_before, older)

    log = DocumentLog.objects.get(file_id=file_id)
    taken = document_log.log_doc_taken(log)

    assert taken is older  # brought forward, not rebuilt
    assert doc_text(taken) == doc_text(document_log.log_doc(log))
    assert doc_text(taken).startswith("second first ")


def test_a_cached_state_older_than_the_snapshot_is_not_used(owner, project):
    file_id = ProjectFile.objects.get(project=project, path="main.tex").pk
    _store(owner, project, file_id, "first ")
    seq = DocumentLog.objects.get(file_id=file_id).last_seq
    stale = document_log.documents.take(file_id, seq)
    _store(owner, project, file_id, "second ")
    from collaboration.services import log_compact

    log_compact(file_id=file_id)  # folds every update into the snapshot and deletes them
    document_log.documents.drop(file_id)
    document_log.documents.put(file_id, seq, stale)

    log = DocumentLog.objects.get(file_id=file_id)
    taken = document_log.log_doc_taken(log)

    assert taken is not stale and doc_text(taken).startswith("second first ")
