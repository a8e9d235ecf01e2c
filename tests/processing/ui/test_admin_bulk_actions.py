"""Bulk actions on a filter: "all N jobs matching this filter" is confirmed with N, runs in batches, acts on
exactly the matching jobs that can be acted on, reports the rest, and writes one audit row with the counts."""

import hashlib

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from operators.models import OperatorAction
from processing.models import JobState, ProcessingBlob, ProcessingJob
from tests.operators.factories import operator_user

pytestmark = pytest.mark.django_db

JOBS = reverse("admin:processing_processingjob_changelist")
ECHO, LATEX = "test.echo/v1", "latex.compile.pdf/v1"


def jobs(owner, operation: str, state: str, count: int) -> list[ProcessingJob]:
    blob = ProcessingBlob.objects.get_or_create(
        sha256=hashlib.sha256(b"in").hexdigest(), size_bytes=2, defaults={"data": b"in", "touched_at": timezone.now()}
    )[0]
    now = timezone.now()
    return ProcessingJob.objects.bulk_create(
        ProcessingJob(
            operation=operation,
            requester_id=owner.pk,
            options_digest="0" * 64,
            state=state,
            input_blob=blob,
            queued_at=now,
            completed_at=now if state == JobState.SUCCEEDED else None,
        )
        for _ in range(count)
    )


@pytest.fixture
def acting_operator():
    client = Client()
    client.force_login(operator_user(acting=True, username="ops"))
    return client


def test_cancel_on_a_filter_wider_than_a_page_cancels_exactly_the_matching_active_jobs(owner, acting_operator):
    queued = jobs(owner, ECHO, JobState.QUEUED, 230)
    finished = jobs(owner, ECHO, JobState.SUCCEEDED, 10)
    other = jobs(owner, LATEX, JobState.QUEUED, 5)
    filtered = f"{JOBS}?operation__exact={ECHO}"
    first_page = [str(job.pk) for job in queued[:100]]
    form = {"action": "cancel_jobs", "select_across": "1", "_selected_action": first_page}

    confirmation = acting_operator.post(filtered, form)

    assert confirmation.status_code == 200
    assert 'data-bulk-count="240"' in confirmation.content.decode()
    assert ProcessingJob.objects.filter(state=JobState.QUEUED).count() == 235, "nothing happens before the yes"

    done = acting_operator.post(filtered, {**form, "confirmed": "240"}, follow=True)

    assert set(ProcessingJob.objects.filter(pk__in=[j.pk for j in queued]).values_list("state", flat=True)) == {
        JobState.CANCELLED
    }
    assert set(ProcessingJob.objects.filter(pk__in=[j.pk for j in finished]).values_list("state", flat=True)) == {
        JobState.SUCCEEDED
    }
    assert set(ProcessingJob.objects.filter(pk__in=[j.pk for j in other]).values_list("state", flat=True)) == {
        JobState.QUEUED
    }
    [audit] = OperatorAction.objects.all()
    assert (audit.action, audit.actor_name, audit.count) == ("bulk_cancel", "ops", 240)
    assert audit.outcome == {"cancelled": 230, "already succeeded": 10}
    assert "230 cancelled" in done.content.decode() and "10 already succeeded" in done.content.decode()


def test_the_selected_jobs_alone_are_acted_on_without_select_all(owner, acting_operator):
    queued = jobs(owner, ECHO, JobState.QUEUED, 5)
    form = {"action": "cancel_jobs", "_selected_action": [str(queued[0].pk), str(queued[1].pk)], "confirmed": "2"}

    acting_operator.post(JOBS, form)

    assert ProcessingJob.objects.filter(state=JobState.CANCELLED).count() == 2
    assert OperatorAction.objects.get().action == "cancel"
