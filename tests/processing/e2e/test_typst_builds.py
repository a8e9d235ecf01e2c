"""Typst builds through the whole path: submission → queue → a real agent in bubblewrap → finalization → download.

Jobs are submitted with ``job_submit`` itself (the public builds endpoint picks the operation by
project type elsewhere); everything after that is the real server, agent, sandbox and ``typst``.
"""

import io
import json

import pytest
from pypdf import PdfReader

from processing.submission.submit import job_submit
from tests.factories import ProjectFactory, bearer_token_for
from tests.live_site import site_fixture
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.conftest import RawHttp
from tests.waiting import wait_until
from workspace import services as workspace_services

pytestmark = pytest.mark.django_db(transaction=True)

TYPST = "typst.compile.pdf/v1"


community_server = site_fixture(
    "community_server",
    "typst-builds",
    operations=[TYPST],
    limits={"lease_seconds": 30, "max_attempts": 3},
    distribution="community",
)


@pytest.fixture
def author(owner, community_server):
    return RawHttp(community_server.url, bearer_token_for(owner))


@pytest.fixture
def typst_agent(community_server, author):
    with running_agent(community_server.url, community_server.root, "--operations", TYPST, name="typst") as agent:
        wait_until(lambda: _capability(author) == "available", what="the agent to register")
        yield agent


def _capability(author) -> str | None:
    _, body, _ = author.json("GET", "/v1/processing/capabilities")
    return {item["operation"]: item["state"] for item in body["capabilities"]}.get(TYPST)


def _build(owner, project, key: str) -> str:
    return str(job_submit(actor_id=owner.pk, operation_name=TYPST, idempotency_key=key, project_id=project.pk).job_id)


def _finished(author, job_id: str) -> dict:
    def terminal():
        _, body, _ = author.json("GET", f"/v1/processing/jobs/{job_id}")
        return body if body["state"] in ("succeeded", "failed", "cancelled", "expired") else None

    return wait_until(terminal, timeout=120, what=f"job {job_id} to finish")


def _download(author, job: dict, role: str) -> bytes:
    artifact = next(a for a in job["artifacts"] if a["role"] == role)
    return author.request("GET", artifact["url"])[2]


def _typst_project(owner, source: str | None = None):
    project = ProjectFactory(owner=owner, project_type="typst", starter=True)
    if source is not None:
        workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.typ", data=source.encode())
    return project


def test_the_typst_starter_builds_to_a_pdf_and_rebuilds_as_a_reuse_hit(owner, author, typst_agent):
    project = _typst_project(owner)

    job = _finished(author, _build(owner, project, "first"))

    assert job["state"] == "succeeded", job
    assert job["processor_contract"].startswith("quire-typst-pdf/1 typst/")
    pdf = _download(author, job, "pdf")
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)
    assert "A Quire project" in text and "built by Quire from a frozen snapshot" in text
    assert json.loads(_download(author, job, "report"))["words"] > 10
    assert _download(author, job, "log").startswith(b"Typst build: ")

    again = _finished(author, _build(owner, project, "second"))
    assert (again["state"], again["cache_hit"], again["attempt_count"]) == ("succeeded", True, 0)
    shas = {a["role"]: a["sha256"] for a in job["artifacts"]}
    assert {a["role"]: a["sha256"] for a in again["artifacts"]} == shas


def test_a_typst_error_fails_with_its_file_and_line(owner, author, typst_agent):
    project = _typst_project(owner, "= Title\n\nHello\n#undefined-function()\n")

    job = _finished(author, _build(owner, project, "broken"))

    assert job["state"] == "failed" and job["failure"]["class"] == "processor_rejected"
    assert "main.typ:4" in job["failure"]["message"]
    _, diagnostics, _ = author.json(
        "GET", f"/v1/processing/jobs/{job['id']}/diagnostics", headers={"Accept": "application/json"}
    )
    assert any(e["file"] == "main.typ" and e["line"] == 4 and e["severity"] == "error" for e in diagnostics["entries"])
    assert "main.typ:4: error: unknown variable: undefined-function" in diagnostics["log"]


def test_a_registry_package_is_an_unsupported_dependency_naming_it(owner, author, typst_agent):
    project = _typst_project(owner, '#import "@preview/cetz:0.3.0": canvas\nHello\n')

    job = _finished(author, _build(owner, project, "package"))

    assert job["state"] == "failed" and job["failure"]["class"] == "unsupported_dependency"
    assert "@preview/cetz:0.3.0" in job["failure"]["message"]


@pytest.mark.parametrize(
    "source",
    ['#panic("a\\u{0}b")\n', '#assert(false, message: "x\\u{0}y")\n'],
    ids=["panic", "assert"],
)
def test_a_typst_error_holding_a_nul_reaches_the_author_as_theirs_on_the_first_attempt(
    owner, author, typst_agent, source
):
    project = _typst_project(owner, source)

    job = _finished(author, _build(owner, project, "nul"))

    assert (job["state"], job["failure"]["class"], job["attempt_count"]) == ("failed", "processor_rejected", 1), job
    assert "\ufffd" in job["failure"]["message"]
    _, diagnostics, _ = author.json(
        "GET", f"/v1/processing/jobs/{job['id']}/diagnostics", headers={"Accept": "application/json"}
    )
    assert "replaced by U+FFFD" in diagnostics["log"]


def _pdf_text(data: bytes) -> str:
    return "".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def test_a_labelled_version_builds_its_own_text_is_reused_and_never_the_projects_pdf(owner, author, typst_agent):
    project = _typst_project(owner, "= As sent to the journal\n")
    _, label, _ = author.json("POST", f"/v1/projects/{project.pk}/labels", {"name": "sent"})
    workspace_services.file_write(
        actor_id=owner.pk, project_id=project.pk, path="main.typ", data=b"= As revised since\n"
    )
    current = _finished(author, _build(owner, project, "current"))

    status, submitted, _ = author.json(
        "POST", f"/v1/projects/{project.pk}/builds", {"version": label["version"]}, headers={"Idempotency-Key": "v"}
    )
    assert status == 202, submitted
    built = _finished(author, submitted["id"])
    status, again, _ = author.json(
        "POST", f"/v1/projects/{project.pk}/builds", {"version": label["version"]}, headers={"Idempotency-Key": "w"}
    )
    again = _finished(author, again["id"])
    status, unknown, _ = author.json("POST", f"/v1/projects/{project.pk}/builds", {"version": 999})

    assert built["state"] == "succeeded", built
    assert "As sent to the journal" in _pdf_text(_download(author, built, "pdf"))
    assert (again["state"], again["cache_hit"]) == ("succeeded", True)
    _, output, _ = author.json("GET", f"/v1/projects/{project.pk}/output")
    assert output["job"] == current["id"]  # the project's PDF is still its current text's
    assert (status, unknown["error"]["code"]) == (404, "version_not_found")
