"""Every file in tests/corpora/ is replayed through the component that must refuse it (see expectations.json)."""

import contextlib
import hashlib
import http.client
import json
import socket
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from quire_worker.contracts import FailureClass, Limits, ProcessorFailure
from quire_worker.unpack import bundle_unpack

CORPORA = Path(__file__).resolve().parent / "corpora"
EXPECTED: dict[str, str] = json.loads((CORPORA / "expectations.json").read_text())


def corpus(folder: str) -> list[str]:
    return sorted(name for name in EXPECTED if name.startswith(f"{folder}/"))


# --- PPTX packages: refused at submission, before anything is reserved ----------------------------------


@pytest.fixture
def extended(settings, configure_deployment):
    settings.QUIRE_DISTRIBUTION = "extended"
    configure_deployment(operations=["pptx.import.typst/v1"])


@pytest.mark.django_db
@pytest.mark.parametrize("name", [n for n in corpus("pptx") if EXPECTED[n].startswith("pptx_")])
def test_hostile_presentations_are_refused_at_submission(owner_client, extended, name):
    from processing.models import ProcessingJob

    response = owner_client.generic(
        "POST",
        "/v1/imports/pptx?filename=deck.pptx",
        (CORPORA / name).read_bytes(),
        content_type="application/vnd.openxmlformats-officedocument.presentationml.presentation",
        HTTP_IDEMPOTENCY_KEY=f"corpus-{name}",
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == EXPECTED[name]
    assert not ProcessingJob.objects.exists()


def test_a_nested_zip_bomb_inside_a_presentation_is_never_expanded(tmp_path):
    from quire_worker.processors.pptx.import_typst import PptxImportProcessor
    from quire_worker.sandbox import BwrapExecutor

    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "in" / "input.pptx").write_bytes((CORPORA / "pptx/nested-bomb.pptx").read_bytes())
    try:
        PptxImportProcessor().run(
            input_dir=tmp_path / "in",
            output_dir=tmp_path / "out",
            request={"input_profile": "editable"},
            limits=Limits(wall_seconds=60),
            cancel=threading.Event(),
            executor=BwrapExecutor(),
        )
    except ProcessorFailure as failure:
        assert failure.failure_class in (FailureClass.INVALID_INPUT, FailureClass.RESOURCE_LIMIT)
    written = sum(path.stat().st_size for path in tmp_path.rglob("*") if path.is_file())
    assert written < 5_000_000, "the inner 30 MB were expanded somewhere"


# --- project bundles: the agent unpacks nothing unsafe --------------------------------------------------


@pytest.mark.parametrize("name", corpus("bundles"))
def test_hostile_bundles_are_refused_by_the_agent_and_write_nothing_outside(tmp_path, name):
    destination = tmp_path / "job" / "input"
    with pytest.raises(ProcessorFailure) as refused:
        bundle_unpack((CORPORA / name).read_bytes(), destination)
    assert refused.value.failure_class == FailureClass.INVALID_INPUT
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and destination not in p.parents]
    assert outside == []


@pytest.mark.django_db
@pytest.mark.parametrize("name", corpus("bundles"))
def test_hostile_bundles_are_refused_by_the_import_finalizer(name):
    from processing.finalization.provisioning import bundle_to_prepared_project
    from processing.finalization.publication import FinalizationRejected

    with pytest.raises(FinalizationRejected):
        bundle_to_prepared_project((CORPORA / name).read_bytes(), fallback_name="x")


# --- TeX: the sandbox holds -------------------------------------------------------------------------------


def _latex(tmp_path: Path, source: bytes, limits: Limits):
    from quire_worker.processors.latex.compile_pdf import LatexProcessor
    from quire_worker.sandbox import BwrapExecutor

    files = tmp_path / "input" / "files"
    files.mkdir(parents=True)
    (files / "main.tex").write_bytes(source)
    manifest = {
        "schema": "project-bundle/v1",
        "project_type": "latex",
        "entry_path": "main.tex",
        "settings": {"compiler": "pdflatex"},
        "workspace_version": "1",
        "content_generation": 1,
        "source_epoch": 1_700_000_000,
        "files": [
            {"path": "main.tex", "kind": "text", "length": len(source), "sha256": hashlib.sha256(source).hexdigest()}
        ],
    }
    (tmp_path / "input" / "manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "output").mkdir()
    return LatexProcessor().run(
        input_dir=tmp_path / "input",
        output_dir=tmp_path / "output",
        request={},
        limits=limits,
        cancel=threading.Event(),
        executor=BwrapExecutor(),
    )


@pytest.mark.parametrize("name", [n for n in corpus("tex") if EXPECTED[n] == "resource_limit"])
def test_tex_that_loops_or_floods_ends_as_a_resource_limit(tmp_path, name):
    limits = Limits(wall_seconds=8, cpu_seconds=8, output_bytes=2 * 1024 * 1024, log_bytes=64 * 1024)
    with pytest.raises(ProcessorFailure) as failure:
        _latex(tmp_path, (CORPORA / name).read_bytes(), limits)
    assert failure.value.failure_class == FailureClass.RESOURCE_LIMIT


def test_tex_reading_outside_its_directory_leaks_nothing(tmp_path):
    secret = next(line for line in Path("/etc/passwd").read_text().splitlines() if line.startswith("root:"))
    try:
        result = _latex(tmp_path, (CORPORA / "tex/reads-passwd.tex").read_bytes(), Limits(wall_seconds=30))
        produced = b"".join(output.path.read_bytes() for output in result.outputs) + result.diagnostics.log.encode()
    except ProcessorFailure as failure:
        produced = failure.diagnostics.log.encode() + failure.message.encode()
    assert secret.encode() not in produced


def test_tex_cannot_escape_to_a_shell(tmp_path):
    marker = Path("/tmp/quire-corpus-pwned")
    marker.unlink(missing_ok=True)
    with contextlib.suppress(ProcessorFailure):  # failing is fine; running the shell is not
        _latex(tmp_path, (CORPORA / "tex/shell-escape.tex").read_bytes(), Limits(wall_seconds=30))
    assert not marker.exists()


# --- Yjs updates ------------------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", corpus("yjs"))
def test_hostile_yjs_updates_are_refused_and_store_nothing(owner_client, project, name):
    from collaboration.models import AcceptedUpdate

    response = owner_client.generic(
        "POST",
        f"/v1/projects/{project.pk}/documents/main.tex/updates",
        (CORPORA / name).read_bytes(),
        content_type="application/octet-stream",
    )
    assert (response.status_code, response.json()["error"]["code"]) == (400, EXPECTED[name])
    assert not AcceptedUpdate.objects.exists()


@pytest.mark.django_db
def test_an_enormous_yjs_update_is_413_and_stores_nothing(owner_client, project, settings):
    from collaboration.models import AcceptedUpdate

    response = owner_client.generic(
        "POST",
        f"/v1/projects/{project.pk}/documents/main.tex/updates",
        b"\x01" * (settings.COLLAB_MAX_UPDATE_BYTES + 1),
        content_type="application/octet-stream",
    )
    assert (response.status_code, response.json()["error"]["code"]) == (413, "update_too_large")
    assert not AcceptedUpdate.objects.exists()


# --- raw HTTP against a real server -----------------------------------------------------------------------


def _send(base_url: str, raw: bytes) -> tuple[int, bytes]:
    parts = urlsplit(base_url)
    line, rest = raw.split(b"\r\n", 1)
    request = line + b"\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + rest
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(request)
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, response.read()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("name", corpus("http"))
def test_hostile_requests_get_a_clear_4xx_and_change_nothing(live_quire, name):
    from tests.factories import ProjectFactory, UserFactory, bearer_token_for
    from workspace.models import Project, ProjectFile

    owner = UserFactory()
    project = ProjectFactory(owner=owner, starter=True)
    template = (CORPORA / name).read_bytes()
    head, _, body = template.partition(b"\r\n\r\n")
    head = head.replace(b"{token}", bearer_token_for(owner).encode()).replace(b"{project}", str(project.pk).encode())
    head = head.replace(b"{length}", str(len(body)).encode())
    before = (Project.objects.count(), ProjectFile.objects.count(), Project.objects.get(pk=project.pk).generation)

    status, response = _send(live_quire, head + b"\r\n\r\n" + body)

    expected_status, expected_code = EXPECTED[name].split()
    assert status == int(expected_status), response[:300]
    assert json.loads(response)["error"]["code"] == expected_code
    after = (Project.objects.count(), ProjectFile.objects.count(), Project.objects.get(pk=project.pk).generation)
    assert after == before


def test_the_corpora_are_what_the_generator_writes(tmp_path, monkeypatch):
    from tests.corpora import generate

    monkeypatch.setattr(generate, "HERE", tmp_path)
    generate.main()
    for name in EXPECTED:
        if name not in generate.NOT_REPRODUCIBLE:
            assert (tmp_path / name).read_bytes() == (CORPORA / name).read_bytes(), name
    assert (tmp_path / "expectations.json").read_bytes() == (CORPORA / "expectations.json").read_bytes()


# --- PDFs: refused at acceptance, or bounded by the indexing processor ----------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("name", [n for n in corpus("pdf") if EXPECTED[n].startswith("400")])
def test_hostile_pdfs_are_refused_by_the_library_and_store_nothing(owner_client, project, configure_deployment, name):
    configure_deployment()
    from library.models import LibraryDocument
    from processing.models import ProcessingJob

    response = owner_client.generic(
        "POST",
        f"/v1/projects/{project.pk}/library?filename=x.pdf",
        (CORPORA / name).read_bytes(),
        content_type="application/pdf",
        HTTP_IDEMPOTENCY_KEY=f"corpus-{name}",
    )
    status, code = EXPECTED[name].split()
    assert (response.status_code, response.json()["error"]["code"]) == (int(status), code)
    assert not LibraryDocument.objects.exists() and not ProcessingJob.objects.exists()


def test_a_pdf_with_a_huge_page_count_is_indexed_up_to_the_page_bound_and_says_so(tmp_path):
    from quire_worker.processors.pdf.index_text import MAX_PAGES, PdfTextProcessor
    from quire_worker.sandbox import BwrapExecutor

    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "in" / "input.pdf").write_bytes((CORPORA / "pdf/huge-page-count.pdf").read_bytes())
    result = PdfTextProcessor().run(
        input_dir=tmp_path / "in",
        output_dir=tmp_path / "out",
        request={},
        limits=Limits(wall_seconds=60),
        cancel=threading.Event(),
        executor=BwrapExecutor(),
    )
    pages = json.loads(result.outputs[0].path.read_text())
    assert (pages["page_count"], pages["indexed_pages"], pages["truncated"]) == (5000, MAX_PAGES, True)
    assert any("Only part of the text" in entry.message for entry in result.diagnostics.entries)


def test_a_pdf_too_slow_to_extract_within_the_budget_is_a_resource_limit(tmp_path):
    from quire_worker.processors.pdf.index_text import PdfTextProcessor
    from quire_worker.sandbox import BwrapExecutor

    (tmp_path / "in").mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "in" / "input.pdf").write_bytes((CORPORA / "pdf/huge-page-count.pdf").read_bytes())
    with pytest.raises(ProcessorFailure) as failure:
        PdfTextProcessor(time_budget_seconds=0).run(
            input_dir=tmp_path / "in",
            output_dir=tmp_path / "out",
            request={},
            limits=Limits(wall_seconds=60),
            cancel=threading.Event(),
            executor=BwrapExecutor(),
        )
    assert failure.value.failure_class == FailureClass.RESOURCE_LIMIT


# --- Office: a document that keeps LibreOffice busy is killed at the timeout --------------------------------


@pytest.mark.slow
def test_an_office_file_that_hangs_libreoffice_is_killed_and_the_next_one_converts():
    from office.exceptions import ConversionTimedOut
    from tests.office.documents import docx_with, pdf_text
    from tests.office.test_libreoffice import convert, libreoffice_runtime

    runtime = libreoffice_runtime(slots=1, conversion_timeout=2)
    try:
        with pytest.raises(ConversionTimedOut):
            convert(runtime, (CORPORA / "office/slow-to-lay-out.docx").read_bytes(), ".docx")
        assert "recovered" in pdf_text(convert(runtime, docx_with(["recovered"]), ".docx").pdf)
    finally:
        runtime.close()
