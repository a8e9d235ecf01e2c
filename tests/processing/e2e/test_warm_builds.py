"""Warm LaTeX builds through the whole path: the second build of a project starts from the first's auxiliary
files, its PDF is the bytes a clean build makes, and the warm start stays the requester's, in its project."""

import pytest

from access.services import member_set
from processing.models import ProcessingArtifact, ProcessingJob
from processing.submission.warm_start import warm_start_offered
from scripts.bench.author_paper import author_project
from tests.factories import ProjectFactory, UserFactory, bearer_token_for
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.conftest import RawHttp
from tests.processing.e2e.test_latex_builds import LATEX, _build, _finished, _write
from tests.processing.factories import JobFactory
from workspace import facade as workspace

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def author(owner, protocol_server):
    return RawHttp(protocol_server.url, bearer_token_for(owner))


@pytest.fixture
def latex_agent(protocol_server):
    with running_agent(protocol_server.url, protocol_server.root, "--operations", LATEX, name="latex") as agent:
        yield agent


def pdf_of(job: dict) -> dict:
    return next(artifact for artifact in job["artifacts"] if artifact["role"] == "pdf")


def succeeded(author, project, key: str, body: dict | None = None) -> dict:
    job = _finished(author, _build(author, project, key, body)["id"], timeout=180)
    assert job["state"] == "succeeded", job
    return job


def test_an_edit_builds_warm_and_a_clean_rebuild_gives_the_same_pdf(owner, author, latex_agent):
    project = ProjectFactory(owner=owner)
    _write(owner, project, author_project())
    first = succeeded(author, project, "first")
    _write(owner, project, author_project(word="immutable"))

    warm = succeeded(author, project, "warm")
    clean = succeeded(author, project, "clean", {"clean": True})

    assert (first["start"], warm["start"], clean["start"]) == ("clean", "warm", "clean")
    assert clean["cache_hit"] is False, "a clean build reuses nothing"
    assert pdf_of(clean)["sha256"] == pdf_of(warm)["sha256"] != pdf_of(first)["sha256"]
    assert ProcessingJob.objects.get(pk=warm["id"]).warm_start_blob_id is not None
    assert ProcessingJob.objects.get(pk=clean["id"]).warm_start_blob_id is None


def test_the_warm_start_is_never_shown_nor_published(owner, author, latex_agent):
    project = ProjectFactory(owner=owner, starter=True)

    job = succeeded(author, project, "only")

    assert ProcessingArtifact.objects.filter(job_id=job["id"], role="warm").exists()
    assert "warm" not in {artifact["role"] for artifact in job["artifacts"]}
    hidden = ProcessingArtifact.objects.get(job_id=job["id"], role="warm")
    status, body, _ = author.json("GET", f"/v1/processing/jobs/{job['id']}/artifacts/{hidden.pk}")
    assert (status, body["error"]["code"]) == (404, "artifact_not_found")
    output = workspace.output_for(user_id=owner.pk, project_id=project.pk)
    assert set(output.files) == {"pdf", "log", "synctex", "report"}


def test_a_co_author_and_another_project_start_clean(owner, author, latex_agent, protocol_server):
    project = ProjectFactory(owner=owner, starter=True)
    succeeded(author, project, "owner's")
    colleague = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=colleague.username, role="editor")
    _write(owner, project, {"main.tex": "\\documentclass{article}\\begin{document}Edited.\\end{document}\n"})
    other = ProjectFactory(owner=owner, starter=True)
    _write(owner, other, {"main.tex": "\\documentclass{article}\\begin{document}Another.\\end{document}\n"})

    theirs = succeeded(RawHttp(protocol_server.url, bearer_token_for(colleague)), project, "colleague's")
    elsewhere = succeeded(author, other, "other project")

    assert (theirs["start"], elsewhere["start"]) == ("clean", "clean")


def test_a_warm_start_from_another_project_is_refused(owner, author, latex_agent):
    mine, stranger = ProjectFactory(owner=owner, starter=True), UserFactory()
    theirs = ProjectFactory(owner=stranger, starter=True)
    source = ProcessingArtifact.objects.get(job_id=succeeded(author, mine, "mine")["id"], role="warm")

    def job_naming(project, requester) -> ProcessingJob:
        return JobFactory(
            operation=LATEX, requester=requester, project_id=project.pk, warm_start_blob_id=source.blob_id
        )

    assert warm_start_offered(job_naming(theirs, stranger).pk) is None, "never another project's"
    assert warm_start_offered(job_naming(mine, stranger).pk) is None, "never another requester's"
    assert warm_start_offered(job_naming(mine, owner).pk).blob_id == source.blob_id
