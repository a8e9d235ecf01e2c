"""Library acceptance contention is observable in ``/metrics``: each acceptance's transaction time, the time it
waits at the document's gate (the conditional revision update, where contenders for one document meet on its
row lock), and an earlier request's outcome that could not be resolved."""

import threading
import time
from datetime import timedelta

import psycopg
import pytest
from django.utils import timezone
from prometheus_client import REGISTRY

from library.services.acceptance import OPERATION
from processing.models import IdempotencyReservation
from processing.relay.brokers import quire_conninfo
from tests.concurrency import a_backend_waiting_on_lock
from tests.library.factories import accept
from tests.library.pdfs import text_pdf
from tests.waiting import wait_until


def _sample(name: str, labels: dict | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


@pytest.mark.django_db
def test_every_acceptance_times_its_transaction_and_its_gate(owner, project):
    transactions = _sample("quire_library_acceptance_transaction_seconds_count")
    gates = _sample("quire_library_acceptance_gate_wait_seconds_count")

    accepted = accept(owner, project, text_pdf(["first"]))
    accept(owner, project, text_pdf(["second"]), document_id=accepted.document_id, revision=1)

    assert _sample("quire_library_acceptance_transaction_seconds_count") == transactions + 2
    assert _sample("quire_library_acceptance_gate_wait_seconds_count") == gates + 2


@pytest.mark.django_db(transaction=True)
def test_a_contender_held_at_the_documents_row_shows_its_wait_in_the_gate_figure(owner, project):
    document = accept(owner, project, text_pdf(["first"])).document_id
    before = _sample("quire_library_acceptance_gate_wait_seconds_sum")
    outcome = {}

    with psycopg.connect(**quire_conninfo()) as holder:
        holder.execute("SELECT 1 FROM workspace_librarydocument WHERE id = %s FOR UPDATE", [document])

        def contender():
            try:
                outcome["accepted"] = accept(owner, project, text_pdf(["second"]), document_id=document, revision=1)
            finally:
                from django.db import connection

                connection.close()

        thread = threading.Thread(target=contender)
        thread.start()
        wait_until(a_backend_waiting_on_lock)
        seen_waiting = time.monotonic()
        time.sleep(0.2)  # the wait the figure must show: the holder keeps the row this much longer
        released = time.monotonic()
        holder.commit()
    thread.join(timeout=30)

    assert outcome["accepted"].document_id == document
    assert _sample("quire_library_acceptance_gate_wait_seconds_sum") - before >= released - seen_waiting


@pytest.mark.django_db
def test_an_earlier_request_whose_outcome_is_unknown_is_counted_and_told_to_retry(owner, project):
    from library.services.acceptance import VersionUpload, library_version_accept
    from processing.exceptions import OutcomeUnresolved

    counted = _sample("quire_library_acceptances_total", {"outcome": "outcome_unresolved"})
    # An earlier request holds the key but names no job yet: its outcome is not known.
    IdempotencyReservation.objects.create(
        actor_id=owner.pk,
        endpoint=f"{_endpoint()}:{project.pk}",
        key="same-key",
        command_digest="0" * 64,
        expires_at=timezone.now() + timedelta(hours=1),
    )

    with pytest.raises(OutcomeUnresolved):
        library_version_accept(
            actor_id=owner.pk,
            idempotency_key="same-key",
            upload=VersionUpload(project.pk, None, None, text_pdf(["words"]), "a.pdf", None),
        )

    assert _sample("quire_library_acceptances_total", {"outcome": "outcome_unresolved"}) == counted + 1


def _endpoint() -> str:
    from processing.operations import operation_get

    return operation_get(OPERATION).endpoint
