"""Property-based fuzzing of the public API from its own OpenAPI document (schemathesis).

Authenticated as a real user who owns real data: generated path parameters are
replaced, half of the time, by ids that exist (a project, a file, a job and its
artifact), so requests reach the code behind the 404s as well as the 404s.
Standard checks: no 5xx, responses conform to the schema, status codes and
content types are documented.
"""

import json

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


@schemathesis.serializer(
    "application/vnd.openxmlformats-officedocument.presentationml.presentation", "application/pdf", "application/zip"
)
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


# Text a client may send that PostgreSQL's text cannot hold, or that spoofs, or that is merely long.
HOSTILE_TEXT = {
    "nul": "a\x00b",
    "lone surrogate": "\ud800",
    "bidi override": "evil\u202etxt.tex",
    "10 kB": "x" * 10240,
}
METHODS = ("get", "post", "put", "patch", "delete")


def _resolved(schema_part: dict, document: dict) -> dict:
    while "$ref" in schema_part:
        schema_part = document["components"]["schemas"][schema_part["$ref"].rsplit("/", 1)[1]]
    return schema_part


def _plain_value(prop: dict, document: dict):
    prop = _resolved(prop, document)
    if "enum" in prop:
        return prop["enum"][0]
    return {"string": "ok", "integer": 1, "boolean": True, "number": 1}.get(prop.get("type"))


def _string_inputs(document: dict):
    """(method, path template, where, name, the JSON body's other required fields) for every string path and
    query parameter and every string property of a JSON request body in the OpenAPI document."""
    for template, item in document["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            for parameter in [*item.get("parameters", []), *operation.get("parameters", [])]:
                if parameter["in"] in ("path", "query") and parameter.get("schema", {}).get("type") == "string":
                    yield method, template, parameter["in"], parameter["name"], {}
            content = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if content is None:
                continue
            body = _resolved(content["schema"], document)
            required = {name: _plain_value(body["properties"][name], document) for name in body.get("required", [])}
            for name, prop in body.get("properties", {}).items():
                if _resolved(prop, document).get("type") == "string" and not prop.get("readOnly"):
                    yield method, template, "json", name, required


def _url(template: str, overrides: dict[str, str]) -> str:
    from urllib.parse import quote

    def filled(match):
        name = match.group(1)
        value = overrides.get(name, CURRENT["real"].get(name, "x"))
        return quote(value.encode("utf-8", "surrogatepass"), safe="")

    import re

    return re.sub(r"\{(\w+)\}", filled, template)


def test_every_string_input_of_the_api_takes_hostile_text_without_a_server_error():
    from urllib.parse import quote

    from django.test import Client

    document = _public_schema()
    client = Client(raise_request_exception=False, headers={"Authorization": f"Bearer {CURRENT['token']}"})
    failures, tried = [], 0
    for method, template, where, name, required in _string_inputs(document):
        for label, text in HOSTILE_TEXT.items():
            encoded = quote(text.encode("utf-8", "surrogatepass"), safe="")
            if where == "path":
                response = getattr(client, method)(_url(template, {name: text}))
            elif where == "query":
                response = getattr(client, method)(f"{_url(template, {})}?{name}={encoded}")
            else:
                body = json.dumps({**required, name: text})  # ensure_ascii writes "\u0000", "\ud800"
                response = getattr(client, method)(_url(template, {}), body, content_type="application/json")
            tried += 1
            if response.status_code >= 500:
                failures.append((method.upper(), template, where, name, label, response.status_code))
    assert tried > 100  # every string input of the document, four texts each
    assert failures == []
