"""The running limits are exact when claimers race: real threads, each on its own database connection.

Every claimer reads the running jobs as a snapshot, so two of them can both see room for one more job of a
requester or project; the claim's advisory locks and recount decide. These tests race several sessions'
claim loops and look at the rows they made.
"""

import threading

import pytest

from processing.models import JobState, ProcessingJob
from processing.queue.claims import claims_acquire
from tests.concurrency import run_together
from tests.factories import ProjectFactory, UserFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory

pytestmark = pytest.mark.django_db(transaction=True)

LATEX = "latex.compile.pdf/v1"
ROOMY = {"running_jobs_per_requester": 100, "running_jobs_per_project": 100, "active_jobs_per_requester": 100,
         "active_jobs_per_project": 100}  # fmt: skip


def race_claim_loops(sessions, *, per_acquire: int) -> list:
    """Every session claims, ``per_acquire`` at a time, until an acquire gets nothing; returns all claims."""
    claims, lock = [], threading.Lock()

    def claim_all(session):
        while taken := claims_acquire(session_id=session.pk, offers={LATEX: 8}, count=per_acquire):
            with lock:
                claims.extend(taken)

    errors = run_together(*[lambda s=session: claim_all(s) for session in sessions])
    assert not errors, errors
    return claims


@pytest.mark.parametrize("per_acquire", [1, 4], ids=["one-claim-per-acquire", "several-claims-per-acquire"])
def test_racing_claimers_start_no_more_jobs_of_a_project_than_its_limit(
    api_client_for, owner, configure_deployment, per_acquire
):
    configure_deployment(limits={**ROOMY, "running_jobs_per_project": 2})
    client = api_client_for(owner)
    crowded = ProjectFactory(owner=owner, starter=True)
    for index in range(6):
        submit_build(client, crowded, key=f"crowded-{index}")
    other_job = submit_build(client, ProjectFactory(owner=owner, starter=True), key="other").json()["id"]

    race_claim_loops([WorkerSessionFactory(processors={LATEX: 8}) for _ in range(3)], per_acquire=per_acquire)

    running = ProcessingJob.objects.filter(state=JobState.RUNNING)
    assert running.filter(project_id=crowded.pk).count() == 2
    assert running.filter(pk=other_job).exists(), "a younger job of another project is not held back"


def test_claimers_taking_jobs_of_two_requesters_in_turn_never_deadlock_and_keep_both_limits(
    api_client_for, owner, configure_deployment
):
    # Oldest first the queue alternates between the requesters, so every acquire of several jobs locks both
    # requesters, as every other acquire does: in one order, or one of them would wait for the other forever.
    configure_deployment(limits={**ROOMY, "running_jobs_per_requester": 3})
    requesters = [owner, UserFactory()]
    for index in range(10):
        requester = requesters[index % 2]
        submit_build(api_client_for(requester), ProjectFactory(owner=requester, starter=True), key=f"k{index}")

    claims = race_claim_loops([WorkerSessionFactory(processors={LATEX: 8}) for _ in range(4)], per_acquire=4)

    assert len({claim.job_id for claim in claims}) == len(claims) == 6
    running = ProcessingJob.objects.filter(state=JobState.RUNNING)
    assert [running.filter(requester_id=requester.pk).count() for requester in requesters] == [3, 3]
