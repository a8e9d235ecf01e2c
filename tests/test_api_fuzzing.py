"""Property-based fuzzing of the public API from its own OpenAPI document (schemathesis).

Authenticated as a real user who owns real data: generated path parameters are
replaced, half of the time, by ids that exist (a project, a file, a job and its
artifact), so requests reach the code behind the 404s as well as the 404s.
Standard checks: no 5xx, responses conform to the schema, status codes and
content types are documented.
"""

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis import checks

from tests.factories import ProjectFactory, UserFactory, bearer_token_for
from tests.processing.factories import deployment_toml
from tests.processing.lifecycle import build_to_success

pytestmark = pytest.mark.django_db


@pytest.fixture
def fuzz_data(settings, tmp_path):
    deployment = tmp_path / "deployment.toml"
    deployment.write_text(deployment_toml(operations=["latex.compile.pdf/v1", "pdf.index.text/v1"]))
    settings.QUIRE_DEPLOYMENT_FILE = str(deployment)
    owner = UserFactory()
    project = ProjectFactory(owner=owner, starter=True)
    from processing.submission.submit import job_submit

    job_id = job_submit(
        actor_id=owner.pk, operation_name="latex.compile.pdf/v1", idempotency_key="seed", project_id=project.pk
    ).job_id
    job = build_to_success(job_id)
    from tests.library.factories import accept
    from tests.library.pdfs import text_pdf

    document = accept(owner, project, text_pdf(["Fuzzing finds what reading misses."]), key="fuzz-library")
    return {
        "token": bearer_token_for(owner),
        "real": {
            "project_id": str(project.pk),
            "path": "main.tex",
            "job_id": str(job.pk),
            "artifact_id": str(job.artifacts.first().pk),
            "username": owner.username,
            "document_id": str(document.document_id),
        },
    }


def _public_schema() -> dict:
    """The public OpenAPI document, generated in-process exactly as /v1/schema serves it."""
    import django
    from drf_spectacular.generators import SchemaGenerator

    django.setup()
    return SchemaGenerator().get_schema(request=None, public=True)


@schemathesis.serializer("application/vnd.openxmlformats-officedocument.presentationml.presentation", "application/pdf")
def _raw_bytes(context, value) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()


schema = schemathesis.openapi.from_dict(_public_schema())
CURRENT: dict = {}  # the running example's real ids and token, set by the fixture below


@pytest.fixture(autouse=True)
def _current_data(fuzz_data):
    CURRENT.update(fuzz_data)
    yield
    CURRENT.clear()


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """Calling the WSGI app directly would close the test's connection after each request (Django's
    test client avoids that the same way)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.hook
def flatmap_path_parameters(context, path_parameters):
    """Half of the cases aim at ids that exist; hypothesis draws which, so ``derandomize`` replays the same cases."""
    generated = path_parameters or {}
    existing = {key: CURRENT["real"].get(key, value) for key, value in generated.items()}
    return st.booleans().map(lambda real: existing if real else generated)


@schema.hook
def map_headers(context, headers):
    return {**(headers or {}), "Authorization": f"Bearer {CURRENT['token']}"}


CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_the_public_api_holds_its_contract_under_generated_input(case):
    from config.wsgi import application

    case.call_and_validate(checks=CHECKS, app=application)
