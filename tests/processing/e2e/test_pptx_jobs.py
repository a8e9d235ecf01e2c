"""PPTX import and Typst export as jobs: the extended distribution, a real agent in bubblewrap, Core finalizers."""

import io
import json

import pytest
from pptx import Presentation
from pptx.util import Inches

from processing.models import ProcessingJob
from tests.factories import ProjectFactory, bearer_token_for
from tests.live_site import site_fixture
from tests.processing.e2e.agents import running_agent
from tests.processing.e2e.conftest import RawHttp
from tests.waiting import wait_until
from workspace import facade as workspace_facade

pytestmark = pytest.mark.django_db(transaction=True)

IMPORT, EXPORT = "pptx.import.typst/v1", "typst.export.pptx/v1"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"


extended_server = site_fixture("extended_server", "extended", operations=[IMPORT, EXPORT], distribution="extended")


@pytest.fixture
def author(owner, extended_server):
    return RawHttp(extended_server.url, bearer_token_for(owner))


@pytest.fixture
def pptx_agent(extended_server):
    with running_agent(
        extended_server.url, extended_server.root, "--operations", f"{IMPORT},{EXPORT}", name="pptx"
    ) as agent:
        yield agent


def _deck(titles: list[str]) -> bytes:
    deck = Presentation()
    deck.slide_width, deck.slide_height = Inches(13.333), Inches(7.5)
    for title in titles:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = f"A point about {title.lower()}"
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def _finished(author, job_id: str) -> dict:
    def terminal():
        _, body, _ = author.json("GET", f"/v1/processing/jobs/{job_id}")
        return body if body["state"] in ("succeeded", "failed", "cancelled", "expired") else None

    return wait_until(terminal, timeout=180, what=f"job {job_id}")


def _capabilities(author) -> dict[str, str]:
    _, body, _ = author.json("GET", "/v1/processing/capabilities")
    return {item["operation"]: item["state"] for item in body["capabilities"]}


def test_capabilities_wait_until_the_agent_registers_them(author):
    assert _capabilities(author) == {IMPORT: "waiting", EXPORT: "waiting"}


def test_an_imported_deck_becomes_a_new_typst_project(owner, author, pptx_agent):
    wait_until(lambda: _capabilities(author).get(IMPORT) == "available", what="the agent to register")
    status, _, raw = author.request(
        "POST",
        "/v1/imports/pptx?filename=Quarterly%20review.pptx&input_profile=editable",
        body=_deck(["Revenue", "Roadmap"]),
        headers={"Content-Type": PPTX, "Idempotency-Key": "import-1"},
    )
    assert status == 202, raw
    done = _finished(author, json.loads(raw)["id"])

    assert done["state"] == "succeeded", done
    project_id = done["result_project_id"]
    assert project_id and {a["role"] for a in done["artifacts"]} == {"bundle", "report"}
    _, project, _ = author.json("GET", f"/v1/projects/{project_id}")
    assert (project["type"], project["entry_path"]) == ("typst", "main.typ")
    main = author.request("GET", f"/v1/projects/{project_id}/files/main.typ")[2].decode()
    assert "Revenue" in main and "Roadmap" in main
    report = next(a for a in done["artifacts"] if a["role"] == "report")
    assert "slides" in json.loads(author.request("GET", report["url"])[2])


def test_a_typst_project_exports_to_a_pptx_with_one_slide_per_page(owner, author, pptx_agent):
    project = ProjectFactory(owner=owner, project_type="typst", starter=True)
    pages = "#set page(width: 16cm, height: 9cm)\n= One\n#pagebreak()\n= Two\n#pagebreak()\n= Three\n"
    author.request(
        "PUT", f"/v1/projects/{project.pk}/files/main.typ", body=pages.encode(), headers={"Content-Type": "text/plain"}
    )
    wait_until(lambda: _capabilities(author).get(EXPORT) == "available", what="the agent to register")
    _, job, _ = author.json("POST", f"/v1/projects/{project.pk}/exports/pptx", headers={"Idempotency-Key": "export-1"})

    done = _finished(author, job["id"])

    assert done["state"] == "succeeded", done
    pptx = next(a for a in done["artifacts"] if a["role"] == "pptx")
    deck = Presentation(io.BytesIO(author.request("GET", pptx["url"])[2]))
    assert len(deck.slides) == 3
    assert all(any(shape.shape_type == 13 for shape in slide.shapes) for slide in deck.slides)  # a picture each


def test_the_import_finalizer_provisions_one_project_even_when_run_twice(owner, extended_server):
    from processing.finalization.finalize import job_finalize
    from processing.queue.claims import claim_acquire
    from processing.queue.delivery import Diagnostics, delivery_accept
    from processing.submission.submit import Upload, job_submit
    from tests.processing.factories import WorkerSessionFactory
    from tests.processing.lifecycle import stage

    job_id = job_submit(
        actor_id=owner.pk, operation_name=IMPORT, idempotency_key="twice", upload=Upload(_deck(["Only"]), "only.pptx")
    ).job_id
    session = WorkerSessionFactory(processors={IMPORT: 1})
    claim = claim_acquire(session_id=session.pk, offers={IMPORT: 1})
    stage(claim, "bundle", "application/x-tar", "bundle.tar", _typst_bundle())
    stage(claim, "report", "application/json", "report.json", b"{}")
    _, token = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())

    first, second = job_finalize(job_id=job_id, token=token), job_finalize(job_id=job_id, token=token)

    job = ProcessingJob.objects.get(pk=job_id)
    assert (first, second, job.state) == ("succeeded", "succeeded", "succeeded")
    assert workspace_facade.project_describe(project_id=job.result_project_id).type == "typst"
    from workspace.models import Project

    assert Project.objects.filter(created_by_id=owner.pk).count() == 1


def test_a_crash_between_provisioning_and_the_terminal_commit_leaves_no_second_project(
    owner, monkeypatch, extended_server
):
    from processing.finalization import finalize as finalization
    from processing.queue.claims import claim_acquire
    from processing.queue.delivery import Diagnostics, delivery_accept
    from processing.submission.submit import Upload, job_submit
    from processing.upkeep.reapers import finalizations_recover
    from tests.processing.factories import WorkerSessionFactory
    from tests.processing.lifecycle import stage
    from workspace.models import Project

    job_id = job_submit(
        actor_id=owner.pk, operation_name=IMPORT, idempotency_key="crash", upload=Upload(_deck(["Crash"]), "crash.pptx")
    ).job_id
    session = WorkerSessionFactory(processors={IMPORT: 1})
    claim = claim_acquire(session_id=session.pk, offers={IMPORT: 1})
    stage(claim, "bundle", "application/x-tar", "bundle.tar", _typst_bundle())
    stage(claim, "report", "application/json", "report.json", b"{}")
    _, token = delivery_accept(claim_id=claim.claim_id, diagnostics=Diagnostics())
    real_transition = finalization.job_transition

    def crash_after_provisioning(**kwargs):
        raise ConnectionError("the process died before the terminal commit")

    monkeypatch.setattr(finalization, "job_transition", crash_after_provisioning)
    with pytest.raises(ConnectionError):
        finalization.job_finalize(job_id=job_id, token=token)
    assert Project.objects.filter(created_by_id=owner.pk).count() == 0  # provisioning rolled back with it

    monkeypatch.setattr(finalization, "job_transition", real_transition)
    ProcessingJob.objects.filter(pk=job_id).update(finalization_expires_at="2000-01-01T00:00:00Z")
    assert finalizations_recover() == 1

    job = ProcessingJob.objects.get(pk=job_id)
    assert job.state == "succeeded"
    assert list(Project.objects.filter(created_by_id=owner.pk).values_list("pk", flat=True)) == [job.result_project_id]


def _typst_bundle() -> bytes:
    import hashlib
    import tarfile

    main = b"= Imported\n\nHello.\n"
    manifest = {
        "schema": "workspace-bundle/v1",
        "project_type": "typst",
        "suggested_name": "Imported",
        "entry_path": "main.typ",
        "files": [
            {"path": "main.typ", "kind": "text", "length": len(main), "sha256": hashlib.sha256(main).hexdigest()}
        ],
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in (("manifest.json", json.dumps(manifest).encode()), ("files/main.typ", main)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
