"""No requester holds more than its fair share of an operation's slots while another requester's job of it
waits: the slots divided among the requesters with work running or queued, rounded up.

The per-requester running limit (4) is above the two slots registered here, so without a share one user with
many long builds would hold both slots and everybody else would wait behind their queue. The claim passes
over a requester at its share; the maintenance loop asks builds held beyond it to give their slots back
(processing/queue/fair_share.py; with real agents: tests/processing/e2e/test_fair_slots_with_real_agents.py).
"""

from functools import partial

import pytest

from processing.kernel.configuration import WorkerIdentity
from processing.models import (
    AttemptState,
    FailureClass,
    JobState,
    OperationPause,
    ProcessingAttempt,
    ProcessingJob,
    SessionState,
    WorkerSession,
)
from processing.queue.cancellation import cancellations_requested, job_cancel_by_operator
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, attempt_fail
from processing.queue.fair_share import FAIR_SHARE_YIELD, fair_share_yields_request
from processing.queue.leases import lease_renew
from processing.queue.retry_policy import consumed_attempts
from processing.upkeep.timeline import job_timeline
from tests.concurrency import run_together
from tests.factories import ProjectFactory, UserFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import build_finished

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


@pytest.mark.django_db
def test_the_share_is_the_slots_divided_among_the_requesters_with_work(api_client_for, owner):
    """Six slots and three requesters: a share of two, so the hog's third build waits for the others'."""
    hog, second, third = owner, UserFactory(), UserFactory()
    hogs = _builds(api_client_for, hog, 4, "hog")
    session = WorkerSessionFactory(processors={LATEX: 6})
    taken = [claim_acquire(session_id=session.pk, offers={LATEX: 1}) for _ in range(2)]
    [seconds] = _builds(api_client_for, second, 1, "second")
    [thirds] = _builds(api_client_for, third, 1, "third")

    after = [claim_acquire(session_id=session.pk, offers={LATEX: 1}) for _ in range(2)]

    assert [str(claim.job_id) for claim in taken] == hogs[:2]
    assert [str(claim.job_id) for claim in after] == [seconds, thirds]


def _hog_holding_both_slots(api_client_for, hog, other):
    """The hog's two builds took both slots while nobody waited; then the other user's build is queued."""
    hogs = _builds(api_client_for, hog, 3, "hog")
    sessions = [WorkerSessionFactory(processors={LATEX: 1}) for _ in range(2)]
    held = [claim_acquire(session_id=session.pk, offers={LATEX: 1}) for session in sessions]
    assert [str(claim.job_id) for claim in held] == hogs[:2]
    [others] = _builds(api_client_for, other, 1, "other")
    return hogs, sessions, held, others


def _stopped_by_its_worker(claim) -> str:
    """What the agent reports when it stops a processor it was told to stop."""
    return attempt_fail(
        claim_id=claim.claim_id,
        failure_class=FailureClass.WORKER_INTERRUPTED,
        code="cancelled",
        message="The job was cancelled.",
        diagnostics=Diagnostics(),
    )


@pytest.mark.django_db
def test_the_newest_build_beyond_the_share_gives_its_slot_to_the_waiting_user(api_client_for, owner):
    hog, other = owner, UserFactory()
    hogs, sessions, held, others = _hog_holding_both_slots(api_client_for, hog, other)

    assert fair_share_yields_request() == 1
    assert fair_share_yields_request() == 0, "asked once: the next pass waits for it to stop"

    older, newer = held
    identity = WorkerIdentity(name="pool", token_sha256="", operations=frozenset({LATEX}))
    assert cancellations_requested(identity=identity, session_id=sessions[1].pk) == [newer.claim_id]
    assert cancellations_requested(identity=identity, session_id=sessions[0].pk) == []
    assert lease_renew(claim_id=newer.claim_id).cancellation_requested
    assert not lease_renew(claim_id=older.claim_id).cancellation_requested

    assert _stopped_by_its_worker(newer) == JobState.QUEUED
    yielded = ProcessingJob.objects.get(pk=newer.job_id)
    attempt = ProcessingAttempt.objects.get(claim_id=newer.claim_id)
    assert (attempt.state, attempt.failure_code) == (AttemptState.RELEASED, FAIR_SHARE_YIELD)
    assert consumed_attempts(yielded) == 0, "giving a slot back uses no attempt"
    assert not yielded.cancellation_requested
    assert "attempt 1 gave its slot to another requester's waiting job" in {
        event.what.split(" (fair share)")[0] for event in job_timeline(newer.job_id)
    }

    freed = claim_acquire(session_id=sessions[1].pk, offers={LATEX: 1})
    assert str(freed.job_id) == others
    assert _running_by_requester() == {hog.pk: 1, other.pk: 1}
    assert fair_share_yields_request() == 0

    _finished(freed)  # the other user's build ends: the yielded build, first in the queue again, runs next
    assert str(claim_acquire(session_id=sessions[1].pk, offers={LATEX: 1}).job_id) == str(newer.job_id)
    assert ProcessingJob.objects.get(pk=hogs[2]).state == JobState.QUEUED


@pytest.mark.django_db
def test_a_build_that_delivers_before_it_stops_is_published_as_usual(api_client_for, owner):
    hog, other = owner, UserFactory()
    _, _, held, _ = _hog_holding_both_slots(api_client_for, hog, other)
    assert fair_share_yields_request() == 1

    assert build_finished(held[1]).state == JobState.SUCCEEDED


@pytest.mark.django_db
def test_a_document_error_reported_while_yielding_is_the_documents(api_client_for, owner):
    hog, other = owner, UserFactory()
    _, _, held, _ = _hog_holding_both_slots(api_client_for, hog, other)
    assert fair_share_yields_request() == 1

    _finished(held[1])

    assert ProcessingJob.objects.get(pk=held[1].job_id).state == JobState.FAILED


@pytest.mark.django_db
def test_a_cancelled_build_asked_to_yield_ends_cancelled(api_client_for, owner):
    hog, other = owner, UserFactory()
    _, _, held, _ = _hog_holding_both_slots(api_client_for, hog, other)
    assert fair_share_yields_request() == 1
    job_cancel_by_operator(job_id=held[1].job_id)

    _stopped_by_its_worker(held[1])

    assert ProcessingJob.objects.get(pk=held[1].job_id).state == JobState.CANCELLED


@pytest.mark.django_db
def test_nothing_yields_while_nobody_else_waits_or_the_waiting_user_holds_its_share(api_client_for, owner):
    hog, other = owner, UserFactory()
    _builds(api_client_for, hog, 3, "hog")
    sessions = [WorkerSessionFactory(processors={LATEX: 1}) for _ in range(3)]
    for session in sessions[:2]:
        claim_acquire(session_id=session.pk, offers={LATEX: 1})
    assert fair_share_yields_request() == 0, "only the hog has work: it may use every slot"

    _builds(api_client_for, other, 2, "other")
    claim_acquire(session_id=sessions[2].pk, offers={LATEX: 1})  # three slots, two requesters: a share of two
    assert _running_by_requester() == {hog.pk: 2, other.pk: 1}
    assert fair_share_yields_request() == 0, "the hog holds its share and no more"


@pytest.mark.django_db
def test_nothing_yields_for_a_paused_operation(api_client_for, owner):
    hog, other = owner, UserFactory()
    _hog_holding_both_slots(api_client_for, hog, other)
    OperationPause.objects.create(operation=LATEX, paused_by="operator")

    assert fair_share_yields_request() == 0
