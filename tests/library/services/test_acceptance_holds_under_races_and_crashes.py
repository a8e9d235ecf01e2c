"""Acceptance under concurrency and failure, with real connections (seed 002's failure windows)."""

import threading

import psycopg
import pytest
from django.db import connection
from rest_framework.test import APIClient

from library.api import views as library_api
from library.models import LibraryDocument, LibraryVersion
from library.services import acceptance
from processing import facade as processing_facade
from processing.models import IdempotencyReservation, OutboxEvent, ProcessingJob
from processing.relay.brokers import quire_conninfo
from tests.factories import bearer_token_for
from tests.library.conftest import post_pdf, put_pdf
from tests.library.factories import accept, document_at_revision
from tests.library.pdfs import text_pdf

pytestmark = pytest.mark.django_db(transaction=True)

OPERATION = "pdf.index.text/v1"


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {bearer_token_for(user)}")
    return client


def _run_together(*targets) -> list:
    """Run each target on its own thread (its own database connection); return their results in order."""
    results: list = [None] * len(targets)
    errors: list[BaseException] = []
    start = threading.Barrier(len(targets))

    def run(index, target):
        try:
            start.wait()
            results[index] = target()
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results


def _wait_for_a_backend_blocked_on(statement: str) -> None:
    """Watch pg_stat_activity from a separate connection until another backend waits for a lock there."""
    with psycopg.connect(**quire_conninfo(), autocommit=True) as watcher:
        for _ in range(20_000):
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                [f"%{statement}%"],
            ).fetchone()
            if row[0]:
                return
            watcher.execute("SELECT pg_sleep(0.005)")  # the database paces the watch, not the test
    raise AssertionError(f"no backend ever waited on {statement!r}")


def _hold_after(monkeypatch, target, name: str, *, when) -> tuple[threading.Event, threading.Event]:
    """Make the first call of ``target.name`` whose result satisfies ``when`` wait for a release."""
    real = getattr(target, name)
    reached, release = threading.Event(), threading.Event()

    def held(*args, **kwargs):
        result = real(*args, **kwargs)
        if when(result) and not reached.is_set():
            reached.set()
            assert release.wait(30), "the test never released the held transaction"
        return result

    monkeypatch.setattr(target, name, held)
    return reached, release


def _library_rows(document_id) -> tuple[int, int, int]:
    versions = LibraryVersion.objects.filter(document_id=document_id)
    jobs = ProcessingJob.objects.filter(pk__in=versions.values("index_job_id"))
    events = OutboxEvent.objects.filter(kind="document.version.accepted", payload__document_id=str(document_id))
    return versions.count(), jobs.count(), events.count()


def test_two_replacements_from_revision_7_accept_exactly_one(monkeypatch, owner, project):
    document = document_at_revision(owner, project, revision=7)
    clients = [_client(owner), _client(owner)]
    pdfs = [text_pdf(["replacement A"]), text_pdf(["replacement B"])]
    reached, release = _hold_after(
        monkeypatch, acceptance, "request_advance", when=lambda revision: revision is not None
    )

    def replace(index):
        return lambda: put_pdf(clients[index], project, document.pk, pdfs[index], revision=7, key=f"client-{index}")

    def referee():
        assert reached.wait(30)
        _wait_for_a_backend_blocked_on("UPDATE workspace_librarydocument")
        release.set()

    responses = _run_together(replace(0), replace(1), referee)[:2]

    assert sorted(response.status_code for response in responses) == [202, 412]
    winner = next(index for index, response in enumerate(responses) if response.status_code == 202)
    loser = 1 - winner
    assert responses[loser].json()["error"]["details"]["current_revision"] == 8
    assert responses[loser]["ETag"] == '"8"'
    document.refresh_from_db()
    assert (document.revision, str(document.requested_version_id)) == (8, responses[winner].json()["version"]["id"])
    assert _library_rows(document.pk) == (2, 2, 2), "the original and the winner only"
    assert not IdempotencyReservation.objects.filter(key=f"client-{loser}").exists()
    assert (
        not LibraryVersion.objects.filter(document=document, size_bytes=len(pdfs[loser]), number=8)
        .exclude(pk=document.requested_version_id)
        .exists()
    )


def test_a_contender_that_inserted_its_version_first_still_loses_cleanly(monkeypatch, owner, project):
    """The loser's version row exists before the winner's; the winner's commit must not wait for the loser.

    (A unique index on the version number did exactly that: a deadlock between the winner's commit-time
    recheck and the loser waiting at the document row.)
    """
    document = document_at_revision(owner, project, revision=7)
    clients = {"early": _client(owner), "winner": _client(owner)}
    early_inserted, winner_updated, release_winner = threading.Event(), threading.Event(), threading.Event()
    real_insert, real_advance = acceptance.version_insert, acceptance.request_advance

    def insert(**kwargs):
        version = real_insert(**kwargs)
        if threading.current_thread().name == "early":
            early_inserted.set()
            assert winner_updated.wait(30)
        return version

    def advance(**kwargs):
        revision = real_advance(**kwargs)
        if threading.current_thread().name == "winner":
            winner_updated.set()
            assert release_winner.wait(30)
        return revision

    monkeypatch.setattr(acceptance, "version_insert", insert)
    monkeypatch.setattr(acceptance, "request_advance", advance)
    responses = {}

    def replace(name, after=None):
        def run():
            if after is not None:
                assert after.wait(30)
            responses[name] = put_pdf(clients[name], project, document.pk, text_pdf([name]), revision=7, key=name)
            connection.close()

        return threading.Thread(target=run, name=name)

    threads = [replace("early"), replace("winner", after=early_inserted)]
    for thread in threads:
        thread.start()
    assert winner_updated.wait(30)
    _wait_for_a_backend_blocked_on("UPDATE workspace_librarydocument")
    release_winner.set()
    for thread in threads:
        thread.join(60)

    assert (responses["winner"].status_code, responses["early"].status_code) == (202, 412)
    assert _library_rows(document.pk) == (2, 2, 2)


def test_a_failure_after_the_document_update_leaves_nothing(monkeypatch, owner, project):
    document = document_at_revision(owner, project, revision=7)
    before = _library_rows(document.pk)

    def broken_job_insert(*args, **kwargs):
        raise RuntimeError("injected: the job insert failed after the document row changed")

    monkeypatch.setattr(processing_facade, "stored_input_job_queue", broken_job_insert)
    with pytest.raises(RuntimeError, match="injected"):
        accept(owner, project, text_pdf(["doomed"]), document_id=document.pk, revision=7, key="doomed")

    refreshed = LibraryDocument.objects.get(pk=document.pk)
    assert (refreshed.revision, refreshed.requested_version_id) == (7, document.requested_version_id)
    assert _library_rows(document.pk) == before
    assert not IdempotencyReservation.objects.filter(key="doomed").exists()
    monkeypatch.undo()
    assert accept(owner, project, text_pdf(["doomed"]), document_id=document.pk, revision=7, key="doomed").job_id


def test_a_crash_after_commit_before_the_response_is_resolved_by_the_retry(monkeypatch, owner, project, pdf):
    client = _client(owner)

    def crash(*args, **kwargs):
        raise ConnectionResetError("injected: the server died after COMMIT, before answering")

    monkeypatch.setattr(library_api, "accepted_response", crash)
    with pytest.raises(ConnectionResetError):
        post_pdf(client, project, pdf, key="lost-response")
    monkeypatch.undo()

    retry = post_pdf(client, project, pdf, key="lost-response")

    assert (retry.status_code, retry["Idempotent-Replayed"]) == (200, "true")
    document_id = retry.json()["document"]["id"]
    version = LibraryVersion.objects.get(document_id=document_id)
    assert retry.json()["version"]["id"] == str(version.pk)
    assert retry.json()["job"]["id"] == str(version.index_job_id)
    assert _library_rows(document_id) == (1, 1, 1)


def test_concurrent_requests_with_one_key_become_one_acceptance(monkeypatch, owner, project, pdf):
    from processing.submission import idempotency

    clients = [_client(owner), _client(owner)]
    reached, release = _hold_after(
        monkeypatch, processing_facade, "stored_input_reserve", when=lambda reservation: reservation is not None
    )

    def referee():
        assert reached.wait(30)
        _wait_for_a_backend_blocked_on(f"INSERT INTO {idempotency.IdempotencyReservation._meta.db_table}")
        release.set()

    responses = _run_together(
        lambda: post_pdf(clients[0], project, pdf, key="twice"),
        lambda: post_pdf(clients[1], project, pdf, key="twice"),
        referee,
    )[:2]

    assert sorted(response.status_code for response in responses) == [200, 202]
    assert len({response.json()["version"]["id"] for response in responses}) == 1
    assert len({response.json()["job"]["id"] for response in responses}) == 1
    assert LibraryVersion.objects.count() == 1
