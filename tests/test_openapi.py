"""The OpenAPI documents: the public one and the worker protocol's, separate and complete."""

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

from processing.protocol.urls import SCHEMA_SETTINGS


@pytest.fixture(scope="module")
def public():
    return SchemaGenerator().get_schema(request=None, public=True)


def test_the_public_document_is_valid_and_covers_only_v1(public):
    validate_schema(public)
    assert public["paths"] and all(path.startswith("/v1/") for path in public["paths"])


@pytest.mark.parametrize("status", ["400", "401", "431"])
def test_every_public_operation_documents_the_errors_any_request_can_meet(public, status):
    # Regression: schemathesis found 401s and 400s that list endpoints did not document.
    for path, operations in public["paths"].items():
        for method, operation in operations.items():
            assert status in operation["responses"], f"{method.upper()} {path} lacks {status}"


def test_downloads_document_that_they_serve_any_media_type(public):
    # Regression: artifact and file downloads answer with the bytes' own media type.
    for path in ("/v1/processing/jobs/{job_id}/artifacts/{artifact_id}", "/v1/projects/{project_id}/files/{path}"):
        assert "*/*" in public["paths"][path]["get"]["responses"]["200"]["content"]


def test_removing_the_last_owner_is_documented(public):
    assert "409" in public["paths"]["/v1/projects/{project_id}/members/{username}"]["delete"]["responses"]


def test_every_processing_route_documents_its_errors(public):
    submit = public["paths"]["/v1/projects/{project_id}/builds"]["post"]["responses"]
    assert {"202", "200", "404", "409", "428", "429", "503"} <= set(submit)


@pytest.mark.django_db
def test_the_worker_protocol_has_its_own_valid_document():
    response = Client().get("/internal/processing/v1/schema", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    import json

    document = json.loads(response.content)
    validate_schema(document)
    assert document["info"]["title"] == SCHEMA_SETTINGS["TITLE"]
    assert document["paths"] and all(path.startswith("/internal/processing/v1/") for path in document["paths"])
