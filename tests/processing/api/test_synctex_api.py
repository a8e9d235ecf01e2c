"""The SyncTeX routes of a build: answers from the build's synctex artifact, under the job's authorization."""

import hashlib
import uuid

import pytest

from access.services import member_remove, member_set
from processing.kernel.blobs import blob_put
from processing.models import ProcessingArtifact
from processing.synctex import lookups as synctex_api
from tests.factories import ProjectFactory, UserFactory
from tests.processing.api.synctex_documents import PROJECT, built, first_lines, needs_pdflatex
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_to_success

pytestmark = [pytest.mark.django_db, needs_pdflatex]


@pytest.fixture(autouse=True)
def _nothing_parsed_yet():
    synctex_api._parsed.clear()
    yield
    synctex_api._parsed.clear()


@pytest.fixture
def latex_project(owner, owner_client):
    project = ProjectFactory(owner=owner)
    for path, text in PROJECT.items():
        response = owner_client.put(f"/v1/projects/{project.pk}/files/{path}", text.encode(), content_type="text/plain")
        assert response.status_code in (200, 201), response.content
    return project


def attach_synctex(job, data: bytes) -> ProcessingArtifact:
    """What the LaTeX worker will deliver: the build's .synctex.gz as the job's synctex artifact."""
    digest = hashlib.sha256(data).hexdigest()
    return ProcessingArtifact.objects.create(
        job=job,
        role="synctex",
        media_type="application/gzip",
        filename="main.synctex.gz",
        size_bytes=len(data),
        sha256=digest,
        blob_id=blob_put(data, sha256=digest),
    )


def finished_build(client, project, *, synctex: bytes | None = None):
    job = build_to_success(submit_build(client, project).json()["id"], pdf=built().pdf)
    if synctex is not None:
        attach_synctex(job, synctex)
    return job


def forward(client, job, **params):
    return client.get(f"/v1/processing/jobs/{job.pk}/synctex/forward", params)


def inverse(client, job, **params):
    return client.get(f"/v1/processing/jobs/{job.pk}/synctex/inverse", params)


@pytest.fixture
def job(owner_client, latex_project):
    return finished_build(owner_client, latex_project, synctex=built().synctex)


def test_show_in_pdf_answers_the_box_of_the_line_on_its_page(owner_client, job):
    typeset, following = first_lines(built().pdf)["Paragraph 2 of two"], first_lines(built().pdf)["Paragraph 3 of two"]

    response = forward(owner_client, job, file="chapters/two.tex", line=7)

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["page"] == typeset.page == 2
    assert typeset.baseline - 12 < body["y"] < body["y"] + body["height"] < following.baseline - 8
    assert body["x"] == pytest.approx(133.77, abs=0.01) and body["width"] == pytest.approx(343.71, abs=0.01)
    assert body["boxes"] == [{key: body[key] for key in ("page", "x", "y", "width", "height")}]


def test_a_click_in_the_pdf_opens_the_file_at_its_line(owner_client, job):
    pdf = first_lines(built().pdf)
    for start, file, line in [
        ("Paragraph 1 of main", "main.tex", 4),
        ("Paragraph 5 of one", "chapters/one.tex", 16),
        ("Paragraph 2 of two", "chapters/two.tex", 6),
    ]:
        typeset = pdf[start]
        response = inverse(owner_client, job, page=typeset.page, x=typeset.x + 3, y=typeset.baseline - 3)
        assert response.status_code == 200, response.content
        assert response.json() == {"file": file, "line": line}

    box = forward(owner_client, job, file="chapters/two.tex", line=7).json()
    centre = inverse(owner_client, job, page=box["page"], x=box["x"] + box["width"] / 2, y=box["y"] + box["height"] / 2)
    assert centre.json() == {"file": "chapters/two.tex", "line": 7}


def test_the_data_is_parsed_once_for_repeated_lookups(owner_client, job, monkeypatch):
    reads = []
    original = synctex_api.blob_read
    monkeypatch.setattr(synctex_api, "blob_read", lambda blob_id: reads.append(blob_id) or original(blob_id))

    for line in (2, 6, 7, 9):
        assert forward(owner_client, job, file="chapters/one.tex", line=line).status_code == 200
    assert inverse(owner_client, job, page=1, x=200, y=300).status_code == 200

    assert len(reads) == 1


def test_a_stranger_gets_404_on_the_lookups_as_on_the_pdf(api_client_for, job):
    stranger = api_client_for(UserFactory())
    pdf = job.artifacts.get(role="pdf")

    for response in (
        forward(stranger, job, file="chapters/two.tex", line=7),
        inverse(stranger, job, page=2, x=200, y=300),
        stranger.get(f"/v1/processing/jobs/{job.pk}/artifacts/{pdf.pk}"),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "job_not_found"


def test_a_member_removed_after_the_build_loses_the_pdf_pane_and_the_lookups_at_once(
    api_client_for, owner, latex_project
):
    editor = UserFactory()
    member_set(actor_id=owner.pk, project_id=latex_project.pk, username=editor.username, role="editor")
    client = api_client_for(editor)
    job = finished_build(client, latex_project, synctex=built().synctex)
    pdf_url = f"/v1/processing/jobs/{job.pk}/artifacts/{job.artifacts.get(role='pdf').pk}"
    assert forward(client, job, file="chapters/two.tex", line=7).status_code == 200  # parsed, and cached
    assert inverse(client, job, page=2, x=200, y=300).status_code == 200
    assert client.get(pdf_url).status_code == 200

    member_remove(actor_id=owner.pk, project_id=latex_project.pk, username=editor.username)

    for response in (
        forward(client, job, file="chapters/two.tex", line=7),
        inverse(client, job, page=2, x=200, y=300),
        client.get(pdf_url),
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "job_not_found"


def test_a_build_without_synctex_data_says_so(owner_client, latex_project):
    job = finished_build(owner_client, latex_project)

    for response in (forward(owner_client, job, file="main.tex", line=4), inverse(owner_client, job, page=1, x=1, y=1)):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "synctex_not_available"


def test_unreadable_synctex_data_is_a_404_of_its_own(owner_client, latex_project):
    job = finished_build(owner_client, latex_project, synctex=b"\x1f\x8b not really gzip")

    for _ in range(2):  # the second answer comes from the remembered refusal
        response = forward(owner_client, job, file="main.tex", line=4)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "synctex_unreadable"


def test_places_nothing_was_typeset_from_are_no_match(owner_client, job):
    for response in (
        forward(owner_client, job, file="chapters/three.tex", line=1),  # not a file of the build
        forward(owner_client, job, file="chapters/two.tex", line=10_000),  # past its last line
        inverse(owner_client, job, page=9, x=200, y=300),  # the PDF has two pages
    ):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "synctex_no_match"


@pytest.mark.parametrize(
    ("route", "params", "field"),
    [
        ("forward", {"line": 7}, "file"),
        ("forward", {"file": "main.tex"}, "line"),
        ("forward", {"file": "main.tex", "line": 0}, "line"),
        ("forward", {"file": "main.tex", "line": "seven"}, "line"),
        ("forward", {"file": "main.tex", "line": 2**40}, "line"),
        ("inverse", {"page": 0, "x": 1, "y": 1}, "page"),
        ("inverse", {"page": 1, "x": "nan", "y": 1}, "x"),
        ("inverse", {"page": 1, "x": 1, "y": "1e300"}, "y"),
        ("inverse", {"page": 1, "x": 1}, "y"),
    ],
)
def test_bad_parameters_are_400_in_the_error_shape(owner_client, job, route, params, field):
    response = owner_client.get(f"/v1/processing/jobs/{job.pk}/synctex/{route}", params)

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "synctex_query_invalid" and error["message"]
    assert field in error["details"]


def test_an_unknown_job_is_404(owner_client):
    response = owner_client.get(f"/v1/processing/jobs/{uuid.uuid4()}/synctex/forward", {"file": "main.tex", "line": 1})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "job_not_found"


def test_a_job_from_before_captures_were_recorded_is_resolved_by_its_bundles_manifest(owner_client, job):
    assert {path for path, _ in job.captured["documents"]} == set(PROJECT)
    type(job).objects.filter(pk=job.pk).update(captured={})

    response = forward(owner_client, job, file="chapters/two.tex", line=7)

    assert response.status_code == 200 and response.json()["page"] == 2


def test_the_cache_holds_few_parsed_files_within_a_memory_budget(monkeypatch):
    loads = []

    def load():
        loads.append(1)
        return built().synctex

    for digest in ("a", "a", "b", "c", "d", "e", "a"):  # four at most: "a" was the least recent when "e" came
        synctex_api.synctex_index_for(digest, load)
    assert len(loads) == 6 and list(synctex_api._parsed) == ["c", "d", "e", "a"]

    monkeypatch.setattr(synctex_api, "CACHE_BYTES", 1)  # over budget, only the last one stays
    synctex_api.synctex_index_for("f", load)
    assert list(synctex_api._parsed) == ["f"]


def test_a_viewer_finds_lines_both_ways_in_the_projects_output(api_client_for, owner, owner_client, latex_project):
    viewer = UserFactory()
    member_set(actor_id=owner.pk, project_id=latex_project.pk, username=viewer.username, role="viewer")
    build_to_success(submit_build(owner_client, latex_project).json()["id"], pdf=built().pdf, synctex=built().synctex)
    client, base = api_client_for(viewer), f"/v1/projects/{latex_project.pk}/output/synctex"
    typeset = first_lines(built().pdf)["Paragraph 5 of one"]

    box = client.get(f"{base}/forward", {"file": "chapters/two.tex", "line": 7})
    spot = client.get(f"{base}/inverse", {"page": typeset.page, "x": typeset.x + 3, "y": typeset.baseline - 3})

    assert box.status_code == 200, box.content
    assert box.json()["page"] == first_lines(built().pdf)["Paragraph 2 of two"].page
    assert spot.json() == {"file": "chapters/one.tex", "line": 16}
    member_remove(actor_id=owner.pk, project_id=latex_project.pk, username=viewer.username)
    assert client.get(f"{base}/forward", {"file": "chapters/two.tex", "line": 7}).status_code == 404


def test_an_output_without_synctex_data_says_so(owner_client, latex_project):
    build_to_success(submit_build(owner_client, latex_project).json()["id"], pdf=built().pdf)

    forward_url = f"/v1/projects/{latex_project.pk}/output/synctex/forward"
    response = owner_client.get(forward_url, {"file": "main.tex", "line": 4})

    assert (response.status_code, response.json()["error"]["code"]) == (404, "synctex_not_available")
