"""Typst builds at Core level: which distributions expose them, and reuse of a real build's result."""

import hashlib
import threading

import pytest

from processing.exceptions import ProjectTypeUnsupported
from processing.finalization.finalize import job_finalize
from processing.models import JobState, ProcessingArtifact, ProcessingAttempt, ProcessingJob
from processing.operations import operation_get
from processing.queue.claims import claim_acquire
from processing.queue.delivery import Diagnostics, delivery_accept
from processing.submission.submit import job_submit
from quire_worker.contracts import Limits, ProcessorResult
from quire_worker.processors.typst.compile_pdf import TypstPdfProcessor
from quire_worker.sandbox import BwrapExecutor
from quire_worker.unpack import input_materialize
from tests.factories import ProjectFactory
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import stage

pytestmark = pytest.mark.django_db

LATEX, TYPST = "latex.compile.pdf/v1", "typst.compile.pdf/v1"


@pytest.fixture(autouse=True)
def _typst_builds_configured(configure_deployment):
    configure_deployment(operations=[LATEX, TYPST])


def _capabilities(client, url="/v1/processing/capabilities") -> dict[str, dict]:
    response = client.get(url)
    assert response.status_code == 200
    return {item["operation"]: item for item in response.json()["capabilities"]}


@pytest.mark.parametrize("distribution", ["community", "extended"])
def test_both_distributions_offer_typst_builds_for_typst_projects_only(owner_client, owner, settings, distribution):
    settings.QUIRE_DISTRIBUTION = distribution
    latex, typst = ProjectFactory(owner=owner), ProjectFactory(owner=owner, project_type="typst")

    everything = _capabilities(owner_client)
    assert (everything[TYPST]["state"], everything[TYPST]["project_types"]) == ("waiting", ["typst"])
    assert set(_capabilities(owner_client, f"/v1/projects/{typst.pk}/processing/capabilities")) == {TYPST}
    assert set(_capabilities(owner_client, f"/v1/projects/{latex.pk}/processing/capabilities")) == {LATEX}


def test_the_operation_declares_a_reusable_build_with_pdf_log_and_report():
    operation = operation_get(TYPST)

    assert (operation.job_class, operation.permission, operation.reusable) == ("project_build", "build", True)
    roles = {role.role: (role.media_types, role.required) for role in operation.result_roles}
    assert roles == {
        "pdf": (("application/pdf",), True),
        "log": (("text/plain",), False),
        "report": (("application/json",), False),
    }
    assert operation.role("report").max_bytes == 64 * 1024


def test_a_latex_project_cannot_be_built_as_typst(owner, project):
    with pytest.raises(ProjectTypeUnsupported):
        job_submit(actor_id=owner.pk, operation_name=TYPST, idempotency_key="latex", project_id=project.pk)

    assert not ProcessingJob.objects.exists()


def _run_for_real(job: ProcessingJob, tmp_path) -> ProcessorResult:
    """What an agent does with the claim: unpack the captured input and run the processor in bubblewrap."""
    run_dir = tmp_path / f"run-{len(list(tmp_path.glob('run-*')))}"
    (run_dir / "output").mkdir(parents=True)
    input_materialize(bytes(job.input_blob.data), schema="project-bundle/v1", destination=run_dir / "input")
    return TypstPdfProcessor().run(
        input_dir=run_dir / "input",
        output_dir=run_dir / "output",
        request={},
        limits=Limits(wall_seconds=60),
        cancel=threading.Event(),
        executor=BwrapExecutor(),
    )


def _deliver(job: ProcessingJob, result: ProcessorResult) -> None:
    session = WorkerSessionFactory(processors={TYPST: 1})
    claim = claim_acquire(session_id=session.pk, offers={TYPST: 1})
    assert str(claim.job_id) == str(job.pk)
    for output in result.outputs:
        stage(claim, output.role, output.media_type, output.filename, output.path.read_bytes())
    _, token = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics(log=result.diagnostics.log))
    job_finalize(job_id=job.pk, token=token)


def test_the_typst_starter_builds_and_an_identical_resubmission_is_a_reuse_hit(owner_client, owner, tmp_path):
    project = ProjectFactory(owner=owner, project_type="typst", starter=True)
    first_id = job_submit(actor_id=owner.pk, operation_name=TYPST, idempotency_key="one", project_id=project.pk).job_id
    first = ProcessingJob.objects.get(pk=first_id)
    assert first.state == JobState.QUEUED
    result, again = _run_for_real(first, tmp_path), _run_for_real(first, tmp_path)
    pdfs = [next(o for o in run.outputs if o.role == "pdf").path.read_bytes() for run in (result, again)]
    assert hashlib.sha256(pdfs[0]).hexdigest() == hashlib.sha256(pdfs[1]).hexdigest()
    _deliver(first, result)

    second_id = job_submit(actor_id=owner.pk, operation_name=TYPST, idempotency_key="two", project_id=project.pk).job_id

    body = owner_client.get(f"/v1/processing/jobs/{second_id}").json()
    assert (body["state"], body["cache_hit"], body["attempt_count"]) == ("succeeded", True, 0)
    assert not ProcessingAttempt.objects.filter(job_id=second_id).exists()
    shas = {a["role"]: a["sha256"] for a in body["artifacts"]}
    assert shas == {a.role: a.sha256 for a in ProcessingArtifact.objects.filter(job_id=first_id)}
    assert set(shas) == {"pdf", "log", "report"} and shas["pdf"] == hashlib.sha256(pdfs[0]).hexdigest()
