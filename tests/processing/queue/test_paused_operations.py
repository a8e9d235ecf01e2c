"""A paused operation gets no new claims and its queued jobs do not expire; resuming moves their deadlines on
by the pause's length and lets them be claimed. Submissions are still admitted."""

import uuid
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from processing.exceptions import OperationUnknown
from processing.models import JobState, OperationPause, ProcessingJob
from processing.queue.claims import claim_acquire
from processing.queue.pauses import operation_pause, operation_resume
from processing.upkeep.reapers import deadlines_expire
from tests.operators.factories import operator_user
from tests.processing import worker_calls as worker

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def operator(db):
    return operator_user(acting=True)


def test_a_paused_operation_gets_no_claims_until_resumed(owner, operator):
    [job_id] = worker.queue_echo_jobs(owner, 1)
    session_id = uuid.UUID(worker.session_with_one_echo_slot())
    operation_pause(actor=operator, operation=worker.ECHO)

    assert claim_acquire(session_id=session_id, offers={worker.ECHO: 1}) is None
    assert ProcessingJob.objects.get(pk=job_id).state == JobState.QUEUED

    operation_resume(actor=operator, operation=worker.ECHO)
    assert str(claim_acquire(session_id=session_id, offers={worker.ECHO: 1}).job_id) == job_id


def test_submissions_are_admitted_while_paused(owner, operator):
    operation_pause(actor=operator, operation=worker.ECHO)

    job_ids = worker.queue_echo_jobs(owner, 2)

    assert set(ProcessingJob.objects.filter(pk__in=job_ids).values_list("state", flat=True)) == {JobState.QUEUED}


def test_the_queue_wait_deadline_does_not_run_while_paused(owner, operator):
    [job_id] = worker.queue_echo_jobs(owner, 1)
    operation_pause(actor=operator, operation=worker.ECHO)
    OperationPause.objects.filter(operation=worker.ECHO).update(paused_at=timezone.now() - timedelta(hours=2))
    deadline = timezone.now() - timedelta(minutes=1)  # past, but within the pause: the clock stood still
    ProcessingJob.objects.filter(pk=job_id).update(deadline_at=deadline)

    assert deadlines_expire() == 0, "a paused operation's queue waits for the operator"
    operation_resume(actor=operator, operation=worker.ECHO)

    moved = ProcessingJob.objects.get(pk=job_id)
    assert moved.state == JobState.QUEUED
    assert moved.deadline_at - deadline >= timedelta(hours=2), "moved on by the pause's length"
    assert deadlines_expire() == 0


def test_pausing_twice_or_resuming_a_running_operation_changes_nothing(operator):
    assert operation_pause(actor=operator, operation=worker.ECHO) is True
    assert operation_pause(actor=operator, operation=worker.ECHO) is False
    assert operation_resume(actor=operator, operation=worker.ECHO) is True
    assert operation_resume(actor=operator, operation=worker.ECHO) is False


def test_an_unknown_operation_cannot_be_paused(operator):
    with pytest.raises(OperationUnknown):
        operation_pause(actor=operator, operation="no.such/v1")
    assert not OperationPause.objects.exists()


def test_metrics_show_which_operations_are_paused(operator):
    operation_pause(actor=operator, operation=worker.ECHO)

    text = Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()

    assert f'quire_processing_operation_paused{{operation="{worker.ECHO}"}} 1.0' in text
    assert 'quire_processing_operation_paused{operation="latex.compile.pdf/v1"} 0.0' in text
