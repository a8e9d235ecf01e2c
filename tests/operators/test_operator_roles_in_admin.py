"""Two roles: a read-only operator sees the operations pages and is refused every action on the server (a
direct POST changes nothing); an acting operator's every action writes exactly one audit row."""

import uuid

import pytest
from django.urls import reverse

from office.models import OfficeSwitch
from operators.models import OperatorAction
from processing.models import JobState, OperationPause, ProcessingJob, SessionState, WorkerSession
from tests.operators.factories import operator_user
from tests.processing import worker_calls as worker

pytestmark = pytest.mark.django_db

OVERVIEW = reverse("admin:processing_overview")
ACT = reverse("admin:processing_overview_act")
JOBS = reverse("admin:processing_processingjob_changelist")
OFFICE = reverse("admin:office_officeswitch_add")


@pytest.fixture
def queued_jobs(owner):
    return worker.queue_echo_jobs(owner, 3)


@pytest.fixture
def live_session(db):
    return uuid.UUID(worker.session_with_one_echo_slot())


def signed_in(client, user):
    client.force_login(user)
    return client


def every_action(job_ids, session_id):
    """Each operator action as the POST a browser (or anybody) would send."""
    return [
        (ACT, {"action": "pause", "target": worker.ECHO}),
        (ACT, {"action": "resume", "target": worker.ECHO}),
        (ACT, {"action": "drain", "target": str(session_id)}),
        (JOBS, {"action": "cancel_jobs", "_selected_action": job_ids, "confirmed": "3"}),
        (JOBS, {"action": "retry_jobs", "_selected_action": job_ids, "confirmed": "3"}),
        (OFFICE, {"background_enabled": ""}),
    ]


def test_a_read_only_operator_sees_the_pages(client, queued_jobs):
    signed_in(client, operator_user(acting=False))

    assert client.get(OVERVIEW).status_code == 200
    assert client.get(JOBS).status_code == 200
    assert client.get(reverse("admin:operators_operatoraction_changelist")).status_code == 200
    assert b'value="pause"' not in client.get(OVERVIEW).content, "no buttons to press"


def test_a_read_only_operators_direct_posts_are_refused_and_change_nothing(client, queued_jobs, live_session):
    signed_in(client, operator_user(acting=False))

    statuses = [client.post(url, data).status_code for url, data in every_action(queued_jobs, live_session)]

    # The overview's actions and the Office switch answer 403; the job list's actions are not offered to the
    # role at all, so Django admin runs none and shows the list again (200, "No action selected").
    assert statuses == [403, 403, 403, 200, 200, 403]

    assert not OperatorAction.objects.exists()
    assert not OperationPause.objects.exists()
    assert WorkerSession.objects.get(pk=live_session).state == SessionState.ACTIVE
    assert set(ProcessingJob.objects.values_list("state", flat=True)) == {JobState.QUEUED}
    assert not OfficeSwitch.objects.exists()


def test_the_overview_action_is_refused_with_403_for_a_read_only_operator(client, live_session):
    signed_in(client, operator_user(acting=False))

    assert client.post(ACT, {"action": "drain", "target": str(live_session)}).status_code == 403
    assert client.post(ACT, {"action": "pause", "target": worker.ECHO}).status_code == 403


def test_each_action_of_an_acting_operator_writes_exactly_one_audit_row(client, queued_jobs, live_session):
    operator = operator_user(acting=True, username="ops")
    signed_in(client, operator)
    expected = ["pause", "resume", "drain", "cancel", "retry", "office_previews"]

    for (url, data), action in zip(every_action(queued_jobs, live_session), expected, strict=True):
        before = OperatorAction.objects.count()
        client.post(url, data)
        assert OperatorAction.objects.count() == before + 1, action
        assert OperatorAction.objects.first().action == action

    rows = {row.action: row for row in OperatorAction.objects.all()}
    assert {row.actor_name for row in rows.values()} == {"ops"}
    assert (rows["cancel"].count, rows["cancel"].outcome) == (3, {"cancelled": 3})
    assert rows["retry"].count == 3, "cancelled jobs are not retryable: each is counted with its refusal"
    assert sum(rows["retry"].outcome.values()) == 3
    assert WorkerSession.objects.get(pk=live_session).state == SessionState.DRAINING
    assert OfficeSwitch.objects.get().background_enabled is False
