"""No requester holds more than half of an operation's slots while another requester's job of it waits.

The per-requester running limit (4) is above the two slots registered here, so without a share one user with
many long builds would hold both slots and everybody else would wait behind their queue.
"""

from functools import partial

import pytest

from processing.models import FailureClass, JobState, ProcessingJob, SessionState, WorkerSession
from processing.queue.cancellation import job_cancel_by_operator
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, attempt_fail
from tests.concurrency import run_together
from tests.factories import ProjectFactory, UserFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory

LATEX = "latex.compile.pdf/v1"


def _builds(api_client_for, user, count: int, prefix: str) -> list[str]:
    client = api_client_for(user)
    return [
        submit_build(client, ProjectFactory(owner=user, starter=True), key=f"{prefix}{n}").json()["id"]
        for n in range(count)
    ]


def _finished(claim) -> None:
    """The build behind ``claim`` ends (a content failure: no retry), which frees its slot."""
    attempt_fail(
        claim_id=claim.claim_id,
        failure_class=FailureClass.PROCESSOR_REJECTED,
        code="latex_error",
        message="! Undefined control sequence.",
        diagnostics=Diagnostics(),
    )


def _running_by_requester() -> dict[int, int]:
    running = ProcessingJob.objects.filter(state=JobState.RUNNING)
    return {
        requester: running.filter(requester_id=requester).count()
        for requester in set(running.values_list("requester_id", flat=True))
    }


@pytest.mark.django_db
def test_a_freed_slot_goes_to_the_waiting_user_ahead_of_the_hogs_older_queue(api_client_for, owner):
    hog, other = owner, UserFactory()
    hogs = _builds(api_client_for, hog, 10, "hog")
    slots = [WorkerSessionFactory(processors={LATEX: 1}) for _ in range(2)]
    held = [claim_acquire(session_id=session.pk, offers={LATEX: 1}) for session in slots]
    assert [str(claim.job_id) for claim in held] == hogs[:2]  # alone, the hog may use every slot
    [others] = _builds(api_client_for, other, 1, "other")

    _finished(held[0])
    freed = claim_acquire(session_id=slots[0].pk, offers={LATEX: 1})

    assert str(freed.job_id) == others  # not hogs[2], which is older
    assert _running_by_requester() == {hog.pk: 1, other.pk: 1}


@pytest.mark.django_db
def test_with_nobody_else_waiting_the_share_does_not_leave_slots_idle(api_client_for, owner):
    hogs = _builds(api_client_for, owner, 3, "hog")
    sessions = [WorkerSessionFactory(processors={LATEX: 1}) for _ in range(2)]

    claims = [claim_acquire(session_id=session.pk, offers={LATEX: 1}) for session in sessions]

    assert [str(claim.job_id) for claim in claims] == hogs[:2]


@pytest.mark.django_db
def test_the_share_follows_the_slots_registered_for_the_operation(api_client_for, owner):
    """Six slots: a share of three, so the hog's fourth build waits for the other user's."""
    hog, other = owner, UserFactory()
    hogs = _builds(api_client_for, hog, 6, "hog")
    session = WorkerSessionFactory(processors={LATEX: 6})
    taken = [claim_acquire(session_id=session.pk, offers={LATEX: 1}) for _ in range(3)]
    [others] = _builds(api_client_for, other, 1, "other")

    fourth = claim_acquire(session_id=session.pk, offers={LATEX: 1})

    assert [str(claim.job_id) for claim in taken] == hogs[:3]
    assert str(fourth.job_id) == others


@pytest.mark.django_db(transaction=True)
def test_two_slots_claiming_at_once_give_the_hog_one_and_the_waiting_user_the_other(api_client_for, owner):
    """Real concurrent claims on two connections, round after round: the head of the queue is the hog's, but
    the claim that commits second must see the first and take the waiting user's job."""
    for round_number in range(4):
        hog, other = UserFactory(), UserFactory()
        _builds(api_client_for, hog, 4, f"hog{round_number}-")
        [others] = _builds(api_client_for, other, 1, f"other{round_number}-")
        sessions = [WorkerSessionFactory(processors={LATEX: 1}) for _ in range(2)]
        claims = {}

        assert run_together(*(partial(_claim_into, claims, session) for session in sessions)) == []

        assert _running_by_requester() == {hog.pk: 1, other.pk: 1}, f"round {round_number}"
        assert others in {str(claim.job_id) for claim in claims.values()}
        for claim in claims.values():
            _finished(claim)
        for job_id in ProcessingJob.objects.filter(state=JobState.QUEUED).values_list("id", flat=True):
            job_cancel_by_operator(job_id=job_id)  # the next round starts from an empty queue
        WorkerSession.objects.update(state=SessionState.CLOSED)  # and with only its own two slots


def _claim_into(claims: dict, session) -> None:
    claims[session.pk] = claim_acquire(session_id=session.pk, offers={LATEX: 1})
