"""An acquire offering several permits may take several jobs at once, each claimed as a single claim is; a
single claim carries what its rows hold."""

import hashlib

import pytest

from processing.models import AttemptState, JobState, ProcessingAttempt, ProcessingJob, TransferTicket
from processing.operations import operation_get
from processing.queue.claims import claim_acquire, claims_acquire
from processing.submission.submit import job_submit
from tests.factories import ProjectFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory


@pytest.fixture(
    autouse=True,
    params=[
        pytest.param("caller's", marks=pytest.mark.django_db),
        pytest.param("own", marks=pytest.mark.django_db(transaction=True)),
    ],
    ids=["in-the-callers-transaction", "in-a-transaction-of-its-own"],
)
def claim_transaction(request) -> str:
    """Each promise holds whether the acquire is part of its caller's transaction or makes its own, in fewer
    round trips (an agent's acquire: processing/queue/claims.py)."""
    return request.param


LATEX = "latex.compile.pdf/v1"
ECHO = "test.echo/v1"
ROOMY = {"running_jobs_per_requester": 50, "running_jobs_per_project": 50}


def queue_builds(client, owner, count: int, *, project=None) -> list[str]:
    return [
        submit_build(client, project or ProjectFactory(owner=owner, starter=True), key=f"k{index}").json()["id"]
        for index in range(count)
    ]


def test_one_acquire_takes_the_oldest_jobs_each_with_its_own_claim_and_ticket(
    api_client_for, owner, configure_deployment
):
    configure_deployment(limits=ROOMY)
    job_ids = queue_builds(api_client_for(owner), owner, 4)
    session = WorkerSessionFactory(processors={LATEX: 4})

    claims = claims_acquire(session_id=session.pk, offers={LATEX: 3}, count=3)

    assert [str(claim.job_id) for claim in claims] == job_ids[:3]
    assert ProcessingJob.objects.get(pk=job_ids[3]).state == JobState.QUEUED
    assert len({claim.claim_id for claim in claims}) == len({claim.download.ticket_id for claim in claims}) == 3
    for claim in claims:
        attempt = ProcessingAttempt.objects.get(claim_id=claim.claim_id)
        assert (attempt.job_id, attempt.state, attempt.session_id) == (claim.job_id, AttemptState.RUNNING, session.pk)
        ticket = TransferTicket.objects.get(pk=claim.download.ticket_id)
        assert ticket.attempt_id == attempt.pk
        assert ticket.secret_sha256 == hashlib.sha256(claim.download.secret.encode()).hexdigest()
        assert ProcessingJob.objects.get(pk=claim.job_id).state == JobState.RUNNING


def test_several_claims_stay_within_the_offer_and_the_free_slots(api_client_for, owner, configure_deployment):
    configure_deployment(limits=ROOMY)
    queue_builds(api_client_for(owner), owner, 6)
    session = WorkerSessionFactory(processors={LATEX: 3})

    assert len(claims_acquire(session_id=session.pk, offers={LATEX: 1}, count=5)) == 1, "capped by the offer"
    assert len(claims_acquire(session_id=session.pk, offers={LATEX: 3}, count=3)) == 2, "capped by free slots"
    assert claims_acquire(session_id=session.pk, offers={LATEX: 3}, count=3) == []
    assert ProcessingAttempt.objects.filter(session=session, state=AttemptState.RUNNING).count() == 3


def test_several_claims_respect_the_projects_running_limit(api_client_for, owner, configure_deployment):
    configure_deployment(limits={**ROOMY, "running_jobs_per_project": 1})
    client = api_client_for(owner)
    crowded = ProjectFactory(owner=owner, starter=True)
    crowded_jobs = [submit_build(client, crowded, key=f"c{index}").json()["id"] for index in range(3)]
    other_job = submit_build(client, ProjectFactory(owner=owner, starter=True), key="other").json()["id"]
    session = WorkerSessionFactory(processors={LATEX: 4})

    claims = claims_acquire(session_id=session.pk, offers={LATEX: 4}, count=4)

    assert sorted(str(claim.job_id) for claim in claims) == sorted([crowded_jobs[0], other_job])


def test_a_single_claim_is_a_batch_of_one(api_client_for, owner, configure_deployment):
    configure_deployment(limits=ROOMY)
    job_ids = queue_builds(api_client_for(owner), owner, 2)
    session = WorkerSessionFactory(processors={LATEX: 4})

    claim = claim_acquire(session_id=session.pk, offers={LATEX: 4})

    assert str(claim.job_id) == job_ids[0]
    assert ProcessingJob.objects.get(pk=job_ids[1]).state == JobState.QUEUED


def test_each_claim_of_a_mixed_acquire_carries_upload_tickets_for_its_own_operations_roles(
    api_client_for, owner, configure_deployment
):
    configure_deployment(operations=[LATEX, ECHO], limits=ROOMY)
    for index in range(2):  # oldest first: build, echo, build, echo
        submit_build(api_client_for(owner), ProjectFactory(owner=owner, starter=True), key=f"b{index}")
        job_submit(
            actor_id=owner.pk,
            operation_name=ECHO,
            idempotency_key=f"e{index}",
            project_id=ProjectFactory(owner=owner, starter=True).pk,
        )
    session = WorkerSessionFactory(processors={LATEX: 2, ECHO: 2})

    claims = claims_acquire(session_id=session.pk, offers={LATEX: 2, ECHO: 2}, count=4)

    assert [claim.operation for claim in claims] == [LATEX, ECHO, LATEX, ECHO]
    tickets = [(claim, role, ticket) for claim in claims for role, ticket in claim.uploads.items()]
    latex_roles = ["log", "pdf", "report", "synctex", "warm"]
    assert [sorted(claim.uploads) for claim in claims] == [latex_roles, ["echo"], latex_roles, ["echo"]]
    assert len({ticket.ticket_id for _, _, ticket in tickets}) == len(tickets) == 12
    for claim, role, ticket in tickets:
        row = TransferTicket.objects.get(pk=ticket.ticket_id)
        assert (row.kind, row.role, row.attempt.claim_id) == ("upload_output", role, claim.claim_id)
        assert row.max_bytes == ticket.max_bytes == operation_get(claim.operation).role(role).max_bytes
        assert row.secret_sha256 == hashlib.sha256(ticket.secret.encode()).hexdigest()
        assert row.expires_at == ticket.expires_at == claim.download.expires_at


def test_an_offer_below_the_free_slots_is_claimed_in_full(api_client_for, owner, configure_deployment):
    # The offer is the agent's own count of free permits: the slots its running claims leave cap it, they are
    # not taken from it a second time.
    configure_deployment(limits=ROOMY)
    queue_builds(api_client_for(owner), owner, 4)
    session = WorkerSessionFactory(processors={LATEX: 8})
    claims_acquire(session_id=session.pk, offers={LATEX: 2}, count=2)

    assert len(claims_acquire(session_id=session.pk, offers={LATEX: 2}, count=2)) == 2


def test_a_single_claim_offering_two_operations_holds_what_its_rows_hold(owner, configure_deployment):
    # A lone claim's write is sent before it knows its job: it carries upload tickets for every operation offered
    # and writes only those of the operation it claims.
    configure_deployment(operations=[LATEX, ECHO], limits=ROOMY)
    project = ProjectFactory(owner=owner, starter=True)
    echo_job = job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key="e", project_id=project.pk)
    job_submit(actor_id=owner.pk, operation_name=LATEX, idempotency_key="b", project_id=project.pk)
    session = WorkerSessionFactory(processors={LATEX: 1, ECHO: 1})

    claim = claim_acquire(session_id=session.pk, offers={LATEX: 1, ECHO: 1})

    assert (claim.job_id, claim.operation, claim.attempt_number) == (echo_job.job_id, ECHO, 1)
    attempt = ProcessingAttempt.objects.get(claim_id=claim.claim_id)
    processor = session.processors.get(operation=ECHO)
    assert (attempt.number, attempt.operation, attempt.processor_contract, attempt.lease_expires_at) == (
        1,
        ECHO,
        processor.processor_contract,
        claim.lease_expires_at,
    )
    assert attempt.processor_contract == claim.processor_contract
    tickets = TransferTicket.objects.filter(attempt=attempt)
    assert sorted((ticket.kind, ticket.role) for ticket in tickets) == [
        ("download_input", ""),
        ("upload_output", "echo"),
    ]
    download = tickets.get(pk=claim.download.ticket_id)
    assert (download.blob_id, download.expected_sha256, download.expected_size, download.max_bytes) == (
        claim.input_blob_id,
        claim.input_digest,
        claim.input_size,
        claim.input_size,
    )
    assert download.secret_sha256 == hashlib.sha256(claim.download.secret.encode()).hexdigest()
    assert download.expires_at == claim.download.expires_at == claim.uploads["echo"].expires_at
    job = ProcessingJob.objects.get(pk=claim.job_id)
    assert (job.state, job.attempt_count, job.started_at is not None) == (JobState.RUNNING, 1, True)
