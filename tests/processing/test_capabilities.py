from datetime import timedelta

import pytest
from django.utils import timezone

from processing.models import SessionState, WorkerSession
from tests.factories import ProjectFactory
from tests.processing.factories import WorkerSessionFactory

pytestmark = pytest.mark.django_db

LATEX = "latex.compile.pdf/v1"


def _states(client, url="/v1/processing/capabilities") -> dict[str, str]:
    response = client.get(url)
    assert response.status_code == 200
    return {item["operation"]: item["state"] for item in response.json()["capabilities"]}


def test_an_operation_without_a_worker_identity_is_absent(owner_client, configure_deployment):
    configure_deployment(operations=["pdf.index.text/v1"])
    assert LATEX not in _states(owner_client)


def test_configured_but_offline_is_waiting_then_available_then_waiting(owner_client):
    assert _states(owner_client)[LATEX] == "waiting"

    session = WorkerSessionFactory(processors={LATEX: 2})
    assert _states(owner_client)[LATEX] == "available"

    WorkerSession.objects.filter(pk=session.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    assert _states(owner_client)[LATEX] == "waiting"


def test_a_draining_or_unhealthy_session_does_not_make_it_available(owner_client):
    WorkerSessionFactory(processors={LATEX: 1}, state=SessionState.DRAINING)
    unhealthy = WorkerSessionFactory(processors={LATEX: 1})
    unhealthy.processors.update(healthy=False)
    assert _states(owner_client)[LATEX] == "waiting"


def test_a_session_of_an_identity_no_longer_configured_does_not_count(owner_client):
    WorkerSessionFactory(processors={LATEX: 1}, identity="retired-pool")
    assert _states(owner_client)[LATEX] == "waiting"


def test_community_distribution_hides_pptx_operations(owner_client, configure_deployment, settings):
    configure_deployment(operations=[LATEX, "typst.export.pptx/v1", "pptx.import.typst/v1"])
    settings.QUIRE_DISTRIBUTION = "community"
    states = _states(owner_client)
    assert "typst.export.pptx/v1" not in states and "pptx.import.typst/v1" not in states


def test_extended_distribution_shows_pptx_operations_with_profiles(owner_client, configure_deployment, settings):
    configure_deployment(operations=[LATEX, "typst.export.pptx/v1", "pptx.import.typst/v1"])
    settings.QUIRE_DISTRIBUTION = "extended"
    body = owner_client.get("/v1/processing/capabilities").json()["capabilities"]
    by_operation = {item["operation"]: item for item in body}
    assert by_operation["typst.export.pptx/v1"]["state"] == "waiting"
    assert set(by_operation["pptx.import.typst/v1"]["input_profiles"]) == {"editable", "faithful"}
    assert "input_profiles" not in by_operation[LATEX]


def test_project_capabilities_filter_by_project_type(owner_client, owner, configure_deployment, settings):
    configure_deployment(operations=[LATEX, "typst.export.pptx/v1", "pptx.import.typst/v1"])
    settings.QUIRE_DISTRIBUTION = "extended"
    latex, typst = ProjectFactory(owner=owner), ProjectFactory(owner=owner, project_type="typst")

    assert set(_states(owner_client, f"/v1/projects/{latex.pk}/processing/capabilities")) == {LATEX}
    assert set(_states(owner_client, f"/v1/projects/{typst.pk}/processing/capabilities")) == {"typst.export.pptx/v1"}


def test_project_capabilities_of_an_invisible_project_are_404(api_client_for, project):
    from tests.factories import UserFactory

    response = api_client_for(UserFactory()).get(f"/v1/projects/{project.pk}/processing/capabilities")
    assert response.status_code == 404
