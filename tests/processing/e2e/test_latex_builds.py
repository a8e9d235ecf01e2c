"""LaTeX builds through the whole path: public API → queue → a real agent in bubblewrap → finalization → download."""

import io
import json
import re

import pytest
from pypdf import PdfReader

from processing.models import JobState, ProcessingJob
from quire_worker.processors.latex.synctex import input_records
from tests.factories import ProjectFactory, bearer_token_for
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.conftest import RawHttp
from tests.waiting import wait_until
from workspace import services as workspace_services

pytestmark = pytest.mark.django_db(transaction=True)

LATEX = "latex.compile.pdf/v1"


@pytest.fixture
def author(owner, protocol_server):
    return RawHttp(protocol_server.url, bearer_token_for(owner))


@pytest.fixture
def latex_agent(protocol_server):
    with running_agent(
        protocol_server.url, protocol_server.root, "--operations", LATEX, "--slots", "2", name="latex"
    ) as agent:
        yield agent


def _build(author, project, key, body=None) -> dict:
    status, job, _ = author.json(
        "POST", f"/v1/projects/{project.pk}/builds", body or {}, headers={"Idempotency-Key": key}
    )
    assert status in (200, 202), job
    return job


def _write(owner, project, files: dict[str, str]) -> None:
    for path, text in files.items():
        workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=text.encode())


def _finished(author, job_id, timeout=120) -> dict:
    def terminal():
        _, body, _ = author.json("GET", f"/v1/processing/jobs/{job_id}")
        return body if body["state"] in ("succeeded", "failed", "cancelled", "expired") else None

    return wait_until(terminal, timeout=timeout, what=f"job {job_id} to finish")


def test_the_starter_project_builds_to_a_pdf_and_rebuilds_as_a_reuse_hit(owner, author, latex_agent):
    project = ProjectFactory(owner=owner, starter=True)

    job = _finished(author, _build(author, project, "first")["id"])

    assert job["state"] == "succeeded", job
    assert job["processor_contract"].startswith("quire-latex/")
    pdf = next(a for a in job["artifacts"] if a["role"] == "pdf")
    data = author.request("GET", pdf["url"])[2]
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)
    assert "built by Quire from a frozen snapshot" in text
    assert any(a["role"] == "log" for a in job["artifacts"])

    again = _build(author, project, "second")
    assert (again["state"], again["cache_hit"]) == ("succeeded", True)
    assert next(a for a in again["artifacts"] if a["role"] == "pdf")["sha256"] == pdf["sha256"]


def test_a_latex_build_fails_with_every_error_by_file_and_line(owner, author, latex_agent):
    project = ProjectFactory(owner=owner, starter=True)
    broken = r"""\documentclass{article}
\begin{document}
Hello
\undefinedcommand
\input{chapters/one}
\end{document}
"""
    _write(owner, project, {"main.tex": broken, "chapters/one.tex": "First line.\nSecond \\alsoundefined line.\n"})

    job = _finished(author, _build(author, project, "broken")["id"])

    assert job["state"] == "failed" and job["failure"]["class"] == "processor_rejected"
    assert "main.tex:4" in job["failure"]["message"]
    _, diagnostics, _ = author.json(
        "GET", f"/v1/processing/jobs/{job['id']}/diagnostics", headers={"Accept": "application/json"}
    )
    errors = [(e["file"], e["line"]) for e in diagnostics["entries"] if e["severity"] == "error"]
    assert errors == [("main.tex", 4), ("chapters/one.tex", 2)]
    assert re.search(r"^main\.tex:4: error: Undefined control sequence", diagnostics["log"], re.MULTILINE)
    assert re.search(r"^chapters/one\.tex:2: error: Undefined control sequence", diagnostics["log"], re.MULTILINE)


def test_a_multi_file_build_delivers_pdf_log_synctex_and_word_report(owner, author, latex_agent):
    project = ProjectFactory(owner=owner, starter=True)
    main = (
        "\\documentclass{article}\n\\begin{document}\nFive words in the main.\n\\input{chapters/one}\n\\end{document}\n"
    )
    _write(owner, project, {"main.tex": main, "chapters/one.tex": "Three more words.\n"})

    job = _finished(author, _build(author, project, "multi")["id"])

    assert job["state"] == "succeeded", job
    artifacts = {artifact["role"]: artifact for artifact in job["artifacts"]}
    assert set(artifacts) == {"pdf", "log", "synctex", "report"}
    report = json.loads(author.request("GET", artifacts["report"]["url"])[2])
    assert report["words"] == 8 and report["counted_by"].startswith("texcount ")
    synctex = author.request("GET", artifacts["synctex"]["url"])[2]
    assert {"main.tex", "chapters/one.tex"} <= set(input_records(synctex).values())


def test_a_missing_package_is_an_unsupported_dependency(owner, author, latex_agent):
    project = ProjectFactory(owner=owner, starter=True)
    source = "\\documentclass{article}\n\\usepackage{nosuchpackage}\n\\begin{document}x\\end{document}\n"
    workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=source.encode())

    job = _finished(author, _build(author, project, "missing")["id"])

    assert job["failure"]["class"] == "unsupported_dependency"
    assert "nosuchpackage" in job["failure"]["message"]


def test_cancelling_a_running_build_stops_tex_and_publishes_nothing(owner, author, latex_agent):
    project = ProjectFactory(owner=owner, starter=True)
    endless = "\\documentclass{article}\n\\begin{document}\n\\loop\\iftrue\\repeat\n\\end{document}\n"
    workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=endless.encode())
    job_id = _build(author, project, "endless")["id"]
    wait_until(lambda: ProcessingJob.objects.get(pk=job_id).state == JobState.RUNNING, what="the build to start")

    author.json("POST", f"/v1/processing/jobs/{job_id}/cancel")
    job = _finished(author, job_id, timeout=60)

    # Cancelled, not failed by the wall limit: the request reached TeX (the agent is woken by Core).
    assert job["state"] == "cancelled" and job["artifacts"] == []
