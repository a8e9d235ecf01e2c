import pytest
from django.test import Client

from processing.models import ProcessingJob
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, attempt_fail
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory

LATEX = "latex.compile.pdf/v1"


@pytest.fixture
def browser(owner):
    """Django's test client with a signed-in session, as the pages use it."""
    client = Client()
    client.force_login(owner)
    return client


@pytest.fixture
def htmx(browser):
    """``htmx(method, url, data=None, trigger=None)``: a request as htmx sends it."""

    def send(method: str, url: str, data=None, trigger: str | None = None):
        headers = {"HX-Request": "true", **({"HX-Trigger": trigger} if trigger else {})}
        return getattr(browser, method)(url, data or {}, headers=headers)

    return send


@pytest.fixture
def queued_build(owner_client, project) -> ProcessingJob:
    return ProcessingJob.objects.get(pk=submit_build(owner_client, project, key="queued").json()["id"])


def fail_build(
    job_id, *, message="main.tex:4: Undefined control sequence.", failure_class="processor_rejected"
) -> ProcessingJob:
    """Claim the queued build with a fresh session and fail it as the LaTeX processor would (by default for
    an error in the document; ``failure_class`` says otherwise)."""
    session = WorkerSessionFactory(processors={LATEX: 1})
    claim = claim_acquire(session_id=session.pk, offers={LATEX: 1})
    assert claim is not None and str(claim.job_id) == str(job_id)
    entries = ({"file": "main.tex", "line": 4, "severity": "error", "message": "Undefined control sequence."},)
    attempt_fail(
        claim_id=claim.claim_id,
        failure_class=failure_class,
        code="latex_error",
        message=message,
        diagnostics=Diagnostics(log="! Undefined control sequence.\nl.4 \\undefinedcommand", entries=entries),
    )
    return ProcessingJob.objects.get(pk=job_id)


@pytest.fixture
def failed_build(queued_build) -> ProcessingJob:
    """A build its content made fail (a LaTeX error): Rebuild, not Retry."""
    return fail_build(queued_build.pk)


@pytest.fixture
def limit_failed_build(queued_build) -> ProcessingJob:
    """A build that failed through no fault of its content (it ran past a limit): Retry."""
    return fail_build(queued_build.pk, failure_class="resource_limit", message="The build ran past its time limit.")
