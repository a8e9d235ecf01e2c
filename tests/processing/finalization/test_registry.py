"""Every operation is finished by the finalizer its room registered, and a missing one is caught at start-up."""

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from library.services.indexing import index_library_version
from processing.finalization.artifacts import publish_artifacts
from processing.finalization.builds import publish_build
from processing.finalization.provisioning import provision_imported_project
from processing.finalization.registry import FINALIZERS, FinalizerMissing, finalizer_for, finalizer_register
from processing.operations import REGISTRY


def test_every_operation_has_the_finalizer_of_its_kind():
    finishing = {name: finalizer_for(name) for name in REGISTRY}

    assert finishing == {
        "latex.compile.pdf/v1": publish_build,
        "typst.compile.pdf/v1": publish_build,
        "typst.export.pptx/v1": publish_artifacts,
        "test.echo/v1": publish_artifacts,
        "pptx.import.typst/v1": provision_imported_project,
        "pdf.index.text/v1": index_library_version,
    }


def test_an_operation_without_a_finalizer_stops_the_system_check(monkeypatch):
    monkeypatch.delitem(FINALIZERS, "test.echo/v1")

    with pytest.raises(SystemCheckError, match=r"processing\.E010"):
        call_command("check")
    with pytest.raises(FinalizerMissing):
        finalizer_for("test.echo/v1")


def test_a_second_finalizer_for_an_operation_is_refused():
    with pytest.raises(ValueError, match="already has the finalizer"):
        finalizer_register("test.echo/v1", provision_imported_project)
    finalizer_register("test.echo/v1", publish_artifacts)  # the same one again is harmless (apps reloaded)


def test_a_finalizer_for_an_unknown_operation_is_refused():
    with pytest.raises(FinalizerMissing):
        finalizer_register("no.such/v1", publish_artifacts)
