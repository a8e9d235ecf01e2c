"""An infrastructure retry may run on another compatible processor contract (another worker's TeX Live, say),
and the contract of the attempt that produced the result is the one recorded on the job."""

import pytest

from processing.models import AttemptState, JobState, WorkerProcessor
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, attempt_fail
from processing.submission.submit import job_submit
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import build_finished

pytestmark = pytest.mark.django_db

LATEX = "latex.compile.pdf/v1"


def session_offering(contract: str):
    session = WorkerSessionFactory()
    WorkerProcessor.objects.create(session=session, operation=LATEX, processor_contract=contract, slots=1)
    return session


def test_a_retry_lands_on_another_contract_and_the_winning_contract_is_recorded(owner, project):
    job_id = job_submit(actor_id=owner.pk, operation_name=LATEX, idempotency_key="k", project_id=project.pk).job_id
    first = claim_acquire(session_id=session_offering("quire-latex/1 texlive/2023").pk, offers={LATEX: 1})
    state = attempt_fail(
        claim_id=first.claim_id,
        failure_class="worker_interrupted",
        code="worker_stopped",
        message="the worker stopped",
        diagnostics=Diagnostics(log=""),
    )
    assert state == JobState.QUEUED

    second = claim_acquire(session_id=session_offering("quire-latex/1 texlive/2024").pk, offers={LATEX: 1})
    job = build_finished(second)

    assert (second.job_id, second.processor_contract) == (job_id, "quire-latex/1 texlive/2024")
    assert (job.state, job.processor_contract) == (JobState.SUCCEEDED, "quire-latex/1 texlive/2024")
    attempts = list(job.attempts.order_by("number").values_list("number", "processor_contract", "state"))
    assert attempts == [
        (1, "quire-latex/1 texlive/2023", AttemptState.FAILED),
        (2, "quire-latex/1 texlive/2024", AttemptState.DELIVERED),
    ]
