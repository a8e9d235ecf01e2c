"""The starter templates a new project begins with compile (LaTeX through the real sandbox, Typst in-process)."""

import threading

import pytest
import typst

from workspace.starters import STARTERS


def test_the_typst_starter_compiles(tmp_path):
    (tmp_path / "main.typ").write_text(STARTERS["typst"]["main.typ"])
    pdf = typst.compile(str(tmp_path / "main.typ"))
    assert pdf.startswith(b"%PDF")


def test_the_latex_starter_compiles(tmp_path):
    import hashlib
    import json

    from quire_worker.contracts import Limits
    from quire_worker.processors.latex.compile_pdf import LatexProcessor
    from quire_worker.sandbox import BwrapExecutor

    source = STARTERS["latex"]["main.tex"].encode()
    (tmp_path / "input" / "files").mkdir(parents=True)
    (tmp_path / "input" / "files" / "main.tex").write_bytes(source)
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
    result = LatexProcessor().run(
        input_dir=tmp_path / "input",
        output_dir=tmp_path / "output",
        request={},
        limits=Limits(wall_seconds=60),
        cancel=threading.Event(),
        executor=BwrapExecutor(),
    )
    assert next(o for o in result.outputs if o.role == "pdf").path.read_bytes().startswith(b"%PDF")


@pytest.mark.django_db
def test_the_demo_seed_makes_a_coauthor_an_editor_once(owner):
    from django.core.management import call_command

    from access.facade import role_of
    from tests.factories import UserFactory
    from workspace.models import Project

    coauthor = UserFactory()
    call_command("seed_demo_project", owner.username, "--editor", coauthor.username)
    call_command("seed_demo_project", owner.username, "--editor", coauthor.username)

    project = Project.objects.get(name="Demo paper", created_by_id=owner.pk)
    assert role_of(user_id=coauthor.pk, project_id=project.pk) == "editor"


@pytest.mark.django_db
def test_the_demo_paper_has_labels_and_a_bibliography_to_complete(owner):
    from django.core.management import call_command

    from workspace import selectors
    from workspace.models import Project

    call_command("seed_demo_project", owner.username)

    project = Project.objects.get(name="Demo paper", created_by_id=owner.pk)
    main = selectors.file_bytes(selectors.file_current(project_id=project.pk, path="main.tex"))
    bibliography = selectors.file_bytes(selectors.file_current(project_id=project.pk, path="refs.bib"))
    assert b"\\label{sec:method}" in main and b"\\ref{sec:method}" in main
    assert b"@book{knuth1984" in bibliography
