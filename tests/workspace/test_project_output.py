"""The project's output: the newest capture's successful build, published by Processing into Workspace, which
every member who may view the project reads (and nobody else)."""

import hashlib

import pytest

from access.services import member_remove, member_set
from processing.models import JobState, ProcessingJob
from processing.queue.delivery import Diagnostics
from tests.factories import UserFactory
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_claimed, build_finished, build_to_success, pdf_bytes
from tests.processing.ui.conftest import fail_build
from workspace.models import ProjectOutput

pytestmark = pytest.mark.django_db

ERROR = {"file": "main.tex", "line": 3, "severity": "warning", "message": "Reference `x' undefined."}


@pytest.fixture(autouse=True)
def _builds_deployment(configure_deployment):
    configure_deployment()


@pytest.fixture
def viewer(owner, project):
    user = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=user.username, role="viewer")
    return user


@pytest.fixture
def editor(owner, project):
    user = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=user.username, role="editor")
    return user


def build(client, project, *, key: str, pdf: bytes | None = None, **finish) -> ProcessingJob:
    return build_to_success(submit_build(client, project, key=key).json()["id"], pdf=pdf, **finish)


def queued(client, project, *, key: str) -> str:
    response = submit_build(client, project, key=key)
    assert response.status_code == 202, response.content
    return response.json()["id"]


def edit(client, project, text: str) -> None:
    response = client.put(f"/v1/projects/{project.pk}/files/main.tex", text.encode(), content_type="text/plain")
    assert response.status_code == 200, response.content


def test_before_the_first_successful_build_there_is_no_output(owner_client, project):
    response = owner_client.get(f"/v1/projects/{project.pk}/output")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "no_output"
    assert owner_client.get(f"/v1/projects/{project.pk}/output/pdf").json()["error"]["code"] == "no_output"


def test_a_build_by_an_editor_is_the_output_every_member_reads(
    owner, owner_client, project, editor, viewer, api_client_for
):
    pdf = pdf_bytes(pages=2)
    diagnostics = Diagnostics(log="LaTeX Warning: Reference `x' undefined.", entries=(ERROR,))
    job = build(api_client_for(editor), project, key="k", pdf=pdf, words=42, diagnostics=diagnostics)

    output = api_client_for(viewer).get(f"/v1/projects/{project.pk}/output").json()

    assert output["job"] == str(job.pk)
    assert output["built_by"] == editor.username
    assert output["operation"] == "latex.compile.pdf/v1"
    assert output["words"] == 42
    assert output["generation"] == job.captured["generation"]
    assert {(entry["path"], entry["version"]) for entry in output["documents"]} == {
        tuple(entry) for entry in job.captured["documents"]
    }
    roles = {artifact["role"]: artifact for artifact in output["artifacts"]}
    assert set(roles) == {"pdf", "log", "report"}
    assert roles["pdf"] == {
        "role": "pdf",
        "media_type": "application/pdf",
        "size_bytes": len(pdf),
        "url": f"/v1/projects/{project.pk}/output/pdf",
    }
    diagnostics_answer = api_client_for(viewer).get(output["diagnostics"]).json()
    assert diagnostics_answer == {"log": diagnostics.log, "entries": [ERROR]}
    assert b"".join(owner_client.get(roles["pdf"]["url"]).streaming_content) == pdf


def test_the_pdf_is_served_with_its_digest_as_etag_and_in_ranges(owner_client, project):
    pdf = pdf_bytes(pages=3)
    build(owner_client, project, key="k", pdf=pdf)
    url = f"/v1/projects/{project.pk}/output/pdf"

    whole = owner_client.get(url)
    etag = f'"{hashlib.sha256(pdf).hexdigest()}"'
    assert (whole.status_code, whole["ETag"], whole["Accept-Ranges"]) == (200, etag, "bytes")
    assert whole["Content-Type"] == "application/pdf"
    assert whole["Content-Length"] == str(len(pdf))
    assert whole["Content-Disposition"].startswith("inline")

    part = owner_client.get(url, HTTP_RANGE="bytes=10-19")
    assert part.status_code == 206
    assert part["Content-Range"] == f"bytes 10-19/{len(pdf)}"
    assert b"".join(part.streaming_content) == pdf[10:20]

    tail = owner_client.get(url, HTTP_RANGE="bytes=-7")
    assert b"".join(tail.streaming_content) == pdf[-7:]

    assert owner_client.get(url, HTTP_RANGE=f"bytes={len(pdf)}-").status_code == 416
    assert owner_client.get(url, HTTP_IF_NONE_MATCH=etag).status_code == 304
    stale = owner_client.get(url, HTTP_RANGE="bytes=0-3", HTTP_IF_RANGE='"another"')
    assert stale.status_code == 200  # a range of another version than the one asked about: the whole file

    download = owner_client.get(url, {"download": ""})
    assert download["Content-Disposition"].startswith("attachment")
    assert download["Content-Disposition"].endswith('.pdf"')


def test_a_newer_capture_replaces_the_output_and_a_late_older_build_does_not(owner_client, project):
    older = queued(owner_client, project, key="older")
    edit(owner_client, project, "\\documentclass{article}\\begin{document}Newer\\end{document}\n")
    newer = queued(owner_client, project, key="newer")

    claimed_older, claimed_newer = build_claimed(older), build_claimed(newer)
    build_finished(claimed_newer)
    build_finished(claimed_older)  # finishes last, but captured an older generation

    assert ProcessingJob.objects.get(pk=older).state == JobState.SUCCEEDED
    assert owner_client.get(f"/v1/projects/{project.pk}/output").json()["job"] == newer


def test_a_later_build_of_a_newer_capture_replaces_the_output(owner_client, project):
    first = build(owner_client, project, key="first")
    edit(owner_client, project, "\\documentclass{article}\\begin{document}Second\\end{document}\n")
    second = build(owner_client, project, key="second", pdf=pdf_bytes(pages=2))

    output = owner_client.get(f"/v1/projects/{project.pk}/output").json()
    assert output["job"] == str(second.pk) != str(first.pk)
    assert output["generation"] > first.captured["generation"]


def test_a_failed_build_leaves_the_output_as_it_was(owner_client, project):
    good = build(owner_client, project, key="good")
    edit(owner_client, project, "\\documentclass{article}\\begin{document}\\broken\\end{document}\n")
    fail_build(queued(owner_client, project, key="broken"))

    assert owner_client.get(f"/v1/projects/{project.pk}/output").json()["job"] == str(good.pk)


def test_a_build_finished_from_an_earlier_result_is_the_output_too(owner_client, project, editor, api_client_for):
    first = build(owner_client, project, key="first")

    reused_id = submit_build(api_client_for(editor), project, key="again").json()["id"]

    reused = ProcessingJob.objects.get(pk=reused_id)
    assert (reused.state, reused.cache_hit, reused.reused_from_id) == (JobState.SUCCEEDED, True, first.pk)
    output = owner_client.get(f"/v1/projects/{project.pk}/output").json()
    assert (output["job"], output["built_by"]) == (reused_id, editor.username)
    assert b"".join(owner_client.get(f"/v1/projects/{project.pk}/output/pdf").streaming_content).startswith(b"%PDF")


@pytest.mark.parametrize(
    "route",
    ["output", "output/pdf", "output/log", "output/diagnostics", "output/synctex/forward?file=main.tex&line=1"],
)
def test_a_stranger_and_a_removed_member_get_404_on_every_output_route(
    owner, owner_client, project, viewer, api_client_for, route
):
    build(owner_client, project, key="k")
    stranger = api_client_for(UserFactory())
    assert stranger.get(f"/v1/projects/{project.pk}/{route}").json()["error"]["code"] == "project_not_found"
    assert api_client_for(viewer).get(f"/v1/projects/{project.pk}/{route}").status_code in (200, 404)

    member_remove(actor_id=owner.pk, project_id=project.pk, username=viewer.username)

    response = api_client_for(viewer).get(f"/v1/projects/{project.pk}/{route}")
    assert (response.status_code, response.json()["error"]["code"]) == (404, "project_not_found")


def test_an_unknown_output_file_is_404_naming_the_files_there_are(owner_client, project):
    build(owner_client, project, key="k")

    response = owner_client.get(f"/v1/projects/{project.pk}/output/synctex")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "output_file_not_found"
    assert response.json()["error"]["details"]["roles"] == ["log", "pdf"]


def test_the_output_outlives_its_job(owner_client, project):
    pdf = pdf_bytes(pages=2)
    job = build(owner_client, project, key="k", pdf=pdf)
    job.artifacts.all().delete()
    job.attempts.all().delete()
    ProcessingJob.objects.filter(pk=job.pk).delete()  # as the retention reaper retires it

    response = owner_client.get(f"/v1/projects/{project.pk}/output/pdf")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == pdf


def test_a_build_whose_requester_lost_access_before_it_finished_is_no_output(owner, project, editor, api_client_for):
    claimed = build_claimed(queued(api_client_for(editor), project, key="k"))
    member_remove(actor_id=owner.pk, project_id=project.pk, username=editor.username)

    job = build_finished(claimed)

    assert (job.state, job.failure_code) == (JobState.FAILED, "access_revoked")
    assert not ProjectOutput.objects.filter(project_id=project.pk).exists()
