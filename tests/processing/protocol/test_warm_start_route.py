"""``claims/{id}/warm-start``: a claim's warm start goes only to the identity holding the claim, only when it is
the requester's own of the same project, and is what the claim's digest says."""

import hashlib

import pytest
from django.utils import timezone

from processing.kernel.blobs import blob_put
from processing.models import ProcessingArtifact, ProcessingJob
from tests.factories import ProjectFactory, UserFactory
from tests.processing.factories import JobFactory
from tests.processing.protocol.test_protocol_matrix import OTHER_TOKEN, claimed, two_identities  # noqa: F401
from tests.processing.worker_calls import PREFIX, worker_client

pytestmark = pytest.mark.django_db

AUXILIARY = b"the previous build's auxiliary files"


def warm_result(*, project_id, requester_id) -> int:
    """A succeeded build's ``warm`` artifact; returns its blob."""
    job = JobFactory(succeeded=True, requester_id=requester_id, project_id=project_id)
    blob_id = blob_put(AUXILIARY)
    ProcessingArtifact.objects.create(
        job=job,
        role="warm",
        media_type="application/gzip",
        filename="warm-start.tar.gz",
        size_bytes=len(AUXILIARY),
        sha256=hashlib.sha256(AUXILIARY).hexdigest(),
        blob_id=blob_id,
    )
    return blob_id


def claim_starting_from(claim: dict, blob_id: int) -> str:
    ProcessingJob.objects.filter(pk=claim["job_id"]).update(warm_start_blob_id=blob_id)
    return f"{PREFIX}/claims/{claim['claim_id']}/warm-start"


def test_the_holder_gets_the_requesters_own_warm_start(claimed):  # noqa: F811
    _, claim = claimed
    job = ProcessingJob.objects.get(pk=claim["job_id"])

    response = worker_client().get(
        claim_starting_from(claim, warm_result(project_id=job.project_id, requester_id=job.requester_id))
    )

    assert response.status_code == 200
    assert response.content == AUXILIARY
    assert response["X-Quire-Sha256"] == hashlib.sha256(AUXILIARY).hexdigest()


def test_another_identity_gets_claim_lost(claimed):  # noqa: F811
    _, claim = claimed
    job = ProcessingJob.objects.get(pk=claim["job_id"])
    route = claim_starting_from(claim, warm_result(project_id=job.project_id, requester_id=job.requester_id))

    response = worker_client(OTHER_TOKEN).get(route)

    assert (response.status_code, response.json()["error"]["code"]) == (409, "claim_lost")


@pytest.mark.parametrize("whose", ["another project's", "another requester's", "none"])
def test_a_warm_start_out_of_scope_or_absent_is_not_found(claimed, owner, whose):  # noqa: F811
    _, claim = claimed
    job = ProcessingJob.objects.get(pk=claim["job_id"])
    if whose == "none":
        route = f"{PREFIX}/claims/{claim['claim_id']}/warm-start"
    else:
        project_id = ProjectFactory(owner=owner).pk if whose == "another project's" else job.project_id
        requester_id = UserFactory().pk if whose == "another requester's" else job.requester_id
        route = claim_starting_from(claim, warm_result(project_id=project_id, requester_id=requester_id))

    response = worker_client().get(route)

    assert (response.status_code, response.json()["error"]["code"]) == (404, "warm_start_not_found")


def test_the_collector_keeps_the_bytes_a_queued_job_starts_from(claimed):  # noqa: F811
    from datetime import timedelta

    from processing.models import ProcessingBlob
    from processing.upkeep.reapers import blobs_collect

    _, claim = claimed
    job = ProcessingJob.objects.get(pk=claim["job_id"])
    blob_id = warm_result(project_id=job.project_id, requester_id=job.requester_id)
    claim_starting_from(claim, blob_id)
    ProcessingArtifact.objects.filter(role="warm").delete()  # the build it came from is retired
    ProcessingBlob.objects.update(touched_at=timezone.now() - timedelta(days=365))  # past every grace period

    blobs_collect()
    assert ProcessingBlob.objects.filter(pk=blob_id).exists(), "the queued job's warm start stays"

    ProcessingJob.objects.filter(pk=job.pk).update(warm_start_blob=None)
    blobs_collect()
    assert not ProcessingBlob.objects.filter(pk=blob_id).exists(), "once nothing names them, the bytes go"
