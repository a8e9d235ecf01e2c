import uuid

import pytest

from access.services import member_remove, member_set
from processing.models import JobState, ProcessingArtifact, ProcessingAttempt, ProcessingJob
from tests.factories import ProjectFactory, UserFactory
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_to_success, pdf_bytes

LONG_AGO = "2000-01-01T00:00:00Z"

pytestmark = pytest.mark.django_db


@pytest.fixture
def succeeded(owner_client, project):
    job_id = submit_build(owner_client, project).json()["id"]
    return build_to_success(job_id, pdf=pdf_bytes(2))


def test_a_finished_build_shows_its_artifacts(owner_client, succeeded):
    body = owner_client.get(f"/v1/processing/jobs/{succeeded.pk}").json()
    assert body["state"] == "succeeded" and body["phase"] == "complete"
    assert body["attempt_count"] == 1 and body["cancellable"] is False
    assert {artifact["role"] for artifact in body["artifacts"]} == {"pdf", "log"}
    assert body["processor_contract"] == "latex.compile.pdf/v1-contract/1"


def test_artifact_download_streams_the_bytes_with_headers(owner_client, succeeded):
    artifact = succeeded.artifacts.get(role="pdf")
    response = owner_client.get(f"/v1/processing/jobs/{succeeded.pk}/artifacts/{artifact.pk}")

    assert response.status_code == 200
    assert b"".join(response.streaming_content) == pdf_bytes(2)
    assert response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"] == 'attachment; filename="main.pdf"'
    assert response["ETag"] == f'"{artifact.sha256}"'
    again = owner_client.get(
        f"/v1/processing/jobs/{succeeded.pk}/artifacts/{artifact.pk}",
        HTTP_IF_NONE_MATCH=f'"{artifact.sha256}"',
    )
    assert again.status_code == 304


def test_a_revoked_grant_stops_downloads_at_once(api_client_for, owner, project):
    editor = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=editor.username, role="editor")
    client = api_client_for(editor)
    job = build_to_success(submit_build(client, project).json()["id"])
    artifact = job.artifacts.get(role="pdf")
    url = f"/v1/processing/jobs/{job.pk}/artifacts/{artifact.pk}"
    assert client.get(url).status_code == 200

    member_remove(actor_id=owner.pk, project_id=project.pk, username=editor.username)

    assert client.get(url).status_code == 404
    assert client.get(f"/v1/processing/jobs/{job.pk}").status_code == 404
    assert client.get("/v1/processing/jobs").json()["jobs"] == []


@pytest.mark.parametrize(
    "route",
    [
        "/v1/processing/jobs/{job}",
        "/v1/processing/jobs/{job}/diagnostics",
        "/v1/processing/jobs/{job}/artifacts/{art}",
    ],
)
def test_another_users_job_is_404_on_every_route(api_client_for, succeeded, route):
    stranger = api_client_for(UserFactory())
    url = route.format(job=succeeded.pk, art=succeeded.artifacts.first().pk)
    response = stranger.get(url)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "job_not_found"


def test_an_artifact_is_served_only_under_its_own_job(owner_client, project, succeeded):
    reuse_hit = submit_build(owner_client, project, key="again").json()  # unchanged project: artifacts of its own
    assert reuse_hit["cache_hit"] and reuse_hit["id"] != str(succeeded.pk)
    foreign = ProcessingArtifact.objects.get(job_id=reuse_hit["id"], role="pdf")

    for artifact_id in (foreign.pk, uuid.uuid4()):
        response = owner_client.get(f"/v1/processing/jobs/{succeeded.pk}/artifacts/{artifact_id}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "artifact_not_found"


def test_another_users_job_cannot_be_cancelled(api_client_for, owner_client, project):
    job_id = submit_build(owner_client, project).json()["id"]
    response = api_client_for(UserFactory()).post(f"/v1/processing/jobs/{job_id}/cancel")
    assert response.status_code == 404
    assert ProcessingJob.objects.get(pk=job_id).state == JobState.QUEUED


def test_even_a_project_colleague_does_not_see_my_jobs(api_client_for, owner_client, owner, project):
    colleague = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=colleague.username, role="editor")
    job_id = submit_build(owner_client, project).json()["id"]
    assert api_client_for(colleague).get(f"/v1/processing/jobs/{job_id}").status_code == 404


def test_diagnostics_as_text_and_json(owner_client, succeeded):
    text = owner_client.get(f"/v1/processing/jobs/{succeeded.pk}/diagnostics")
    assert text["Content-Type"].startswith("text/plain") and text.content == b"build log"
    structured = owner_client.get(f"/v1/processing/jobs/{succeeded.pk}/diagnostics", HTTP_ACCEPT="application/json")
    assert structured.json() == {"log": "build log", "entries": []}


def test_cancelling_a_queued_job_is_immediate(owner_client, project):
    job_id = submit_build(owner_client, project).json()["id"]
    body = owner_client.post(f"/v1/processing/jobs/{job_id}/cancel").json()
    assert body["state"] == "cancelled" and body["cancellable"] is False
    assert ProcessingJob.objects.get(pk=job_id).terminal.state == "cancelled"


def test_cancelling_a_running_job_requests_it(owner_client, project):
    from processing.queue.claims import claim_acquire
    from tests.processing.factories import WorkerSessionFactory

    job_id = submit_build(owner_client, project).json()["id"]
    session = WorkerSessionFactory(processors={"latex.compile.pdf/v1": 1})
    claim_acquire(session_id=session.pk, offers={"latex.compile.pdf/v1": 1})

    body = owner_client.post(f"/v1/processing/jobs/{job_id}/cancel").json()

    assert body["state"] == "running" and body["cancellation_requested"] is True and body["cancellable"] is False


def test_cancelling_a_finished_job_returns_it_unchanged(owner_client, succeeded):
    response = owner_client.post(f"/v1/processing/jobs/{succeeded.pk}/cancel")
    assert response.status_code == 200 and response.json()["state"] == "succeeded"


def test_job_list_filters_and_pages_with_a_cursor(owner_client, owner, project):
    other = ProjectFactory(owner=owner, starter=True)
    ids = [submit_build(owner_client, project, key=f"k{n}").json()["id"] for n in range(3)]
    other_id = submit_build(owner_client, other, key="other").json()["id"]
    owner_client.post(f"/v1/processing/jobs/{ids[0]}/cancel")

    first = owner_client.get("/v1/processing/jobs?limit=2").json()
    second = owner_client.get(f"/v1/processing/jobs?limit=2&cursor={first['next_cursor']}").json()
    assert [job["id"] for job in first["jobs"] + second["jobs"]] == [other_id, *reversed(ids)]
    assert second["next_cursor"] is None

    active = owner_client.get("/v1/processing/jobs?state=active").json()["jobs"]
    assert {job["id"] for job in active} == {ids[1], ids[2], other_id}
    terminal = owner_client.get("/v1/processing/jobs?state=terminal").json()["jobs"]
    assert [job["id"] for job in terminal] == [ids[0]]
    by_project = owner_client.get(f"/v1/processing/jobs?project_id={other.pk}").json()["jobs"]
    assert [job["id"] for job in by_project] == [other_id]


@pytest.mark.parametrize(
    "query",
    [
        "state=everything", "project_id=not-a-uuid", "limit=many", "cursor=%25%25%25",
        "cursor=WyIyMDIwLTAxLTAxIiwgMV0",  # ["2020-01-01", 1]
        "cursor=W1sieCJdLCBudWxsXQ",  # [["x"], null]
    ],
)  # fmt: skip
def test_bad_list_parameters_are_400(owner_client, query):
    response = owner_client.get(f"/v1/processing/jobs?{query}")
    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"invalid_options", "invalid_cursor"}


def test_an_identical_resubmission_is_a_reuse_hit_without_an_attempt(owner_client, project, succeeded):
    response = submit_build(owner_client, project, key="second")

    assert response.status_code == 202
    hit = response.json()
    assert hit["state"] == "succeeded" and hit["cache_hit"] is True and hit["attempt_count"] == 0
    assert not ProcessingAttempt.objects.filter(job_id=hit["id"]).exists()
    original = {a.role: a.blob_id for a in succeeded.artifacts.all()}
    reused = {a.role: a.blob_id for a in ProcessingArtifact.objects.filter(job_id=hit["id"])}
    assert reused == original
    assert {a["id"] for a in hit["artifacts"]}.isdisjoint({str(a.pk) for a in succeeded.artifacts.all()})


def test_an_edit_means_no_reuse(owner_client, project, succeeded):
    owner_client.put(
        f"/v1/projects/{project.pk}/files/main.tex", b"\\documentclass{article}", content_type="text/plain"
    )
    hit = submit_build(owner_client, project, key="after-edit").json()
    assert hit["state"] == "queued" and hit["cache_hit"] is False


def test_no_reuse_across_projects_even_with_identical_content(owner_client, owner, succeeded):
    twin = ProjectFactory(owner=owner, starter=True)
    assert submit_build(owner_client, twin, key="twin").json()["cache_hit"] is False


def test_no_reuse_with_other_options(owner_client, project, succeeded):
    body = submit_build(owner_client, project, key="xe", body={"compiler": "xelatex"}).json()
    assert body["cache_hit"] is False


def test_deleting_one_job_keeps_bytes_another_still_uses(owner_client, project, succeeded):
    """Past every grace period, the blob collector keeps the bytes a reuse hit still names, and only those."""
    from processing.models import ProcessingBlob
    from processing.upkeep.reapers import blobs_collect

    hit_id = submit_build(owner_client, project, key="second").json()["id"]
    blob_id = succeeded.artifacts.get(role="pdf").blob_id
    ProcessingJob.objects.filter(pk=succeeded.pk).delete()
    ProcessingBlob.objects.update(touched_at=LONG_AGO)  # past the grace period: nothing is spared for its age

    blobs_collect()

    assert ProcessingBlob.objects.filter(pk=blob_id).exists()
    pdf = ProcessingArtifact.objects.get(job_id=hit_id, role="pdf")
    response = owner_client.get(f"/v1/processing/jobs/{hit_id}/artifacts/{pdf.pk}")
    assert response.status_code == 200

    ProcessingJob.objects.filter(pk=hit_id).delete()
    blobs_collect()
    assert not ProcessingBlob.objects.filter(pk=blob_id).exists(), "once no job names them, the bytes go"
