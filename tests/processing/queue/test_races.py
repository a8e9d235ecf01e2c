"""Promises about concurrency, proven with real concurrent connections."""

import threading

import pytest

from processing.models import JobState, ProcessingAttempt, ProcessingJob
from processing.queue.cancellation import job_cancel
from processing.queue.claims import claim_acquire, claims_acquire
from tests.concurrency import nudged, run_together
from tests.factories import ProjectFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory

pytestmark = pytest.mark.django_db(transaction=True)

LATEX = "latex.compile.pdf/v1"


def run_together_checked(*targets):
    errors = run_together(*targets)
    assert not errors, errors


def test_cancelling_a_queued_job_races_a_claim_with_one_winner(api_client_for, owner, configure_deployment):
    roomy = (
        "running_jobs_per_requester",
        "running_jobs_per_project",
        "active_jobs_per_requester",
        "active_jobs_per_project",
    )
    configure_deployment(limits=dict.fromkeys(roomy, 100))
    project = ProjectFactory(owner=owner, starter=True)
    client = api_client_for(owner)
    session = WorkerSessionFactory(processors={LATEX: 100})
    seen = set()
    for round_number in range(30):
        job_id = submit_build(client, project, key=f"round-{round_number}").json()["id"]
        run_together_checked(
            *nudged(
                lambda: claim_acquire(session_id=session.pk, offers={LATEX: 1}),
                lambda job_id=job_id: job_cancel(actor_id=owner.pk, job_id=job_id),
                round_number,
            )
        )
        job = ProcessingJob.objects.get(pk=job_id)
        attempts = ProcessingAttempt.objects.filter(job=job).count()
        if job.state == JobState.CANCELLED:
            assert attempts == 0, f"round {round_number}: cancelled, yet an attempt exists"
        else:
            assert (job.state, attempts) == (JobState.RUNNING, 1), f"round {round_number}: {job.state}/{attempts}"
            assert job.cancellation_requested, "a cancel that lost the race becomes a request to the worker"
        seen.add(job.state)
    assert seen == {JobState.CANCELLED, JobState.RUNNING}, "each side won some rounds: both outcomes were tried"


def test_one_registered_slot_never_yields_two_concurrent_claims(api_client_for, owner):
    project_a = ProjectFactory(owner=owner, starter=True)
    project_b = ProjectFactory(owner=owner, starter=True)
    client = api_client_for(owner)
    submit_build(client, project_a, key="a")
    submit_build(client, project_b, key="b")
    session = WorkerSessionFactory(processors={LATEX: 1})
    claims = []

    run_together_checked(*[lambda: claims.append(claim_acquire(session_id=session.pk, offers={LATEX: 1}))] * 4)

    assert len([claim for claim in claims if claim is not None]) == 1


@pytest.mark.parametrize("per_acquire", [1, 3], ids=["one-claim-per-acquire", "several-claims-per-acquire"])
def test_concurrent_claimers_never_share_a_job(api_client_for, owner, configure_deployment, per_acquire):
    configure_deployment(limits={"running_jobs_per_requester": 100})
    client = api_client_for(owner)
    for index in range(12):
        submit_build(client, ProjectFactory(owner=owner, starter=True), key=f"j{index}")
    sessions = [WorkerSessionFactory(processors={LATEX: 4}) for _ in range(3)]
    claims = []
    lock = threading.Lock()

    def claim_all(session):
        # None only means "nothing free for me right now" (others may hold row locks): keep
        # going while work is queued and this session still has a free slot.
        mine = 0
        while mine < 4 and ProcessingJob.objects.filter(state=JobState.QUEUED).exists():
            taken = claims_acquire(session_id=session.pk, offers={LATEX: 4 - mine}, count=per_acquire)
            mine += len(taken)
            with lock:
                claims.extend(taken)

    run_together_checked(*[lambda s=session: claim_all(s) for session in sessions])

    assert len(claims) == 12
    assert len({claim.job_id for claim in claims}) == 12
    per_session = {session.pk: 0 for session in sessions}
    for claim in claims:
        per_session[ProcessingAttempt.objects.get(claim_id=claim.claim_id).session_id] += 1
    assert max(per_session.values()) <= 4


@pytest.mark.parametrize("per_acquire", [1, 8], ids=["one-claim-per-acquire", "several-claims-per-acquire"])
def test_concurrent_claimers_respect_the_requesters_running_limit(
    api_client_for, owner, configure_deployment, per_acquire
):
    from tests.factories import UserFactory

    configure_deployment(limits={"running_jobs_per_requester": 2})
    busy_client = api_client_for(owner)
    for index in range(6):
        submit_build(busy_client, ProjectFactory(owner=owner, starter=True), key=f"busy{index}")
    patient = UserFactory()
    patient_job = submit_build(api_client_for(patient), ProjectFactory(owner=patient, starter=True), key="p").json()
    sessions = [WorkerSessionFactory(processors={LATEX: 8}) for _ in range(3)]
    claims = []
    lock = threading.Lock()

    def claim_all(session):
        while taken := claims_acquire(session_id=session.pk, offers={LATEX: 8}, count=per_acquire):
            with lock:
                claims.extend(taken)

    run_together_checked(*[lambda s=session: claim_all(s) for session in sessions])

    running = ProcessingJob.objects.filter(state=JobState.RUNNING)
    assert running.filter(requester_id=owner.pk).count() == 2
    assert running.filter(pk=patient_job["id"]).exists(), "a later job of another requester is not starved"


def test_the_claims_lock_statement_derives_advisory_keys_as_python_does():
    from django.db import connection

    from processing.kernel.advisory import advisory_key

    values = ["7", "3f2b8c1e-0d4a-4b59-9a51-2f1f4b8e6c10", "ünïcode"]
    with connection.cursor() as cursor:
        for value in values:
            cursor.execute("SELECT processing_advisory_key('running-project', %s)", [value])
            assert cursor.fetchone()[0] == advisory_key("running-project", value)


def test_a_claim_holds_the_locks_a_later_round_of_another_acquire_tries(api_client_for, owner, project):
    """The first round locks by keys the database derives, later rounds by keys Python derives: the same."""
    from django.db import connection, transaction

    from processing.kernel.advisory import advisory_key
    from processing.queue.claims import PROJECT_LOCK, REQUESTER_LOCK, SESSION_LOCK

    submit_build(api_client_for(owner), project, key="held")
    session = WorkerSessionFactory(processors={LATEX: 1})
    claimed, release = threading.Event(), threading.Event()

    def claim_and_hold():
        try:
            with transaction.atomic():
                assert claim_acquire(session_id=session.pk, offers={LATEX: 1})
                claimed.set()
                assert release.wait(timeout=30)
        finally:
            connection.close()

    holder = threading.Thread(target=claim_and_hold)
    holder.start()
    try:
        assert claimed.wait(timeout=30)
        keys = [
            advisory_key(SESSION_LOCK, session.pk),
            advisory_key(REQUESTER_LOCK, owner.pk),
            advisory_key(PROJECT_LOCK, project.pk),
        ]
        with connection.cursor() as cursor:
            got = [cursor.execute("SELECT pg_try_advisory_lock(%s)", [key]).fetchone()[0] for key in keys]
            cursor.execute("SELECT pg_advisory_unlock_all()")
        assert got == [False, False, False], "each lock the claim took is the one Python names"
    finally:
        release.set()
        holder.join(timeout=30)


def test_a_single_claim_whose_head_went_over_its_limit_while_waiting_takes_the_next_candidate(
    api_client_for, owner, configure_deployment
):
    """B reads the requester as under its limit, then waits for the requester's lock that A holds while A's
    claim commits: after the wait B's write refuses the head (the limit is now reached) and B claims the next
    job instead, of another requester, in the same acquire."""
    from django.db import connection, transaction

    from tests.concurrency import a_backend_waiting_on_lock
    from tests.factories import UserFactory

    configure_deployment(limits={"running_jobs_per_requester": 2})
    busy, patient = api_client_for(owner), UserFactory()
    busy_jobs = [
        submit_build(busy, ProjectFactory(owner=owner, starter=True), key=f"b{n}").json()["id"] for n in range(3)
    ]
    patient_job = submit_build(api_client_for(patient), ProjectFactory(owner=patient, starter=True), key="p").json()
    # Eight slots registered: a requester's fair share (4) is above its running limit (2), which is under test.
    assert (
        str(claim_acquire(session_id=WorkerSessionFactory(processors={LATEX: 6}).pk, offers={LATEX: 1}).job_id)
        == busy_jobs[0]
    )
    holding, release, waiter = threading.Event(), threading.Event(), {}

    def claim_and_hold():
        try:
            with transaction.atomic():
                waiter["a"] = claim_acquire(
                    session_id=WorkerSessionFactory(processors={LATEX: 1}).pk, offers={LATEX: 1}
                )
                holding.set()
                assert release.wait(timeout=30)
        finally:
            connection.close()

    def claim_while_held():
        try:
            waiter["b"] = claim_acquire(session_id=WorkerSessionFactory(processors={LATEX: 1}).pk, offers={LATEX: 1})
        finally:
            connection.close()

    first, second = threading.Thread(target=claim_and_hold), threading.Thread(target=claim_while_held)
    first.start()
    assert holding.wait(timeout=30)
    second.start()
    while not a_backend_waiting_on_lock():  # the second claim's: the first holds its locks and waits on nothing
        assert second.is_alive(), waiter
    release.set()
    first.join(timeout=30), second.join(timeout=30)

    assert str(waiter["a"].job_id) == busy_jobs[1]
    assert str(waiter["b"].job_id) == patient_job["id"], "the head went over the limit: the next job is taken"
    assert ProcessingJob.objects.filter(requester_id=owner.pk, state=JobState.RUNNING).count() == 2
    assert ProcessingJob.objects.get(pk=busy_jobs[2]).state == JobState.QUEUED
