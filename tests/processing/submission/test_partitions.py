"""Builds and library indexing are separate resource classes: each has its own active and running quotas,
named in the deployment TOML (processing/kernel/partitions.py)."""

import pytest

from processing.exceptions import TooManyActiveJobs
from processing.kernel.configuration import deployment
from processing.models import JobState, ProcessingJob
from processing.queue.claims import claim_acquire
from processing.submission.submit import job_submit
from tests.factories import ProjectFactory
from tests.library.factories import accept
from tests.library.pdfs import text_pdf
from tests.processing.factories import WorkerSessionFactory

pytestmark = pytest.mark.django_db

LATEX, INDEX = "latex.compile.pdf/v1", "pdf.index.text/v1"


def _build(owner, key: str):
    return job_submit(
        actor_id=owner.pk, operation_name=LATEX, idempotency_key=key, project_id=ProjectFactory(owner=owner).pk
    )


def test_a_user_at_the_builds_active_quota_can_still_have_a_pdf_indexed(owner, project, configure_deployment):
    configure_deployment(limits={"active_jobs_per_requester": 2})
    _build(owner, "b1"), _build(owner, "b2")

    with pytest.raises(TooManyActiveJobs) as refused:
        _build(owner, "b3")
    accepted = accept(owner, project, text_pdf(["indexed all the same"]), key="pdf-1")

    assert refused.value.details == {"scope": "requester", "partition": "builds", "limit": 2}
    assert ProcessingJob.objects.get(pk=accepted.job_id).operation == INDEX


def test_indexing_jobs_fill_their_own_quota_and_leave_builds_alone(owner, project, configure_deployment):
    configure_deployment(limits={"active_jobs_per_requester": 1})
    accept(owner, project, text_pdf(["first"]), key="pdf-1")

    with pytest.raises(TooManyActiveJobs) as refused:
        accept(owner, project, text_pdf(["second"]), key="pdf-2")
    _build(owner, "b1")

    assert refused.value.details["partition"] == "library"


def test_a_user_running_their_builds_limit_still_gets_an_indexing_job_claimed(owner, project, configure_deployment):
    configure_deployment(limits={"running_jobs_per_requester": 1})
    builds = [str(_build(owner, f"b{n}").job_id) for n in range(2)]
    indexing = str(accept(owner, project, text_pdf(["after the builds"]), key="pdf-1").job_id)
    session = WorkerSessionFactory(processors={LATEX: 2, INDEX: 2})
    offers = {LATEX: 1, INDEX: 1}

    first = claim_acquire(session_id=session.pk, offers=offers)
    second = claim_acquire(session_id=session.pk, offers=offers)

    assert [str(first.job_id), str(second.job_id)] == [builds[0], indexing]  # the second build waits
    assert ProcessingJob.objects.get(pk=builds[1]).state == JobState.QUEUED


def test_the_deployment_toml_names_the_partitions_and_their_limits(configure_deployment):
    configure_deployment(
        limits={"running_jobs_per_requester": 4},
        partitions={
            "typesetting": {"operations": [LATEX, "typst.compile.pdf/v1"], "running_jobs_per_requester": 2},
            "library": {"operations": [INDEX], "active_jobs_per_requester": 100},
        },
    )
    partitions = {partition.name: partition for partition in deployment().partitions}

    assert deployment().partition_of(LATEX).name == "typesetting"
    assert partitions["typesetting"].running_jobs_per_requester == 2
    assert partitions["library"].active_jobs_per_requester == 100
    assert partitions["library"].running_jobs_per_requester == 4  # not named: [limits]'s
    assert deployment().partition_of("test.echo/v1").name == "default"
    assert deployment().partition_of("typst.export.pptx/v1").name == "default"  # these tables replace the built-in


@pytest.mark.parametrize(
    "partitions",
    [
        {"a": {"operations": [LATEX]}, "b": {"operations": [LATEX]}},  # one operation, two partitions
        {"a": {"operations": [LATEX], "running_jobs": 2}},  # a key that is no quota
        {"a": {"operations": []}},
        {"default": {"operations": [LATEX]}},
    ],
)
def test_a_partition_table_that_cannot_be_meant_is_refused(configure_deployment, partitions):
    configure_deployment(partitions=partitions)

    with pytest.raises(ValueError):
        deployment()
