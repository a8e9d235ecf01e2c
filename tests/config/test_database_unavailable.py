"""With its database out of reach, every page and endpoint answers 503 with Retry-After, never a 500.

The database is made unreachable for real: the connection is pointed at a loopback port nobody listens on,
so every query fails as psycopg fails when PostgreSQL is down (connection refused).
"""

import pytest
from django.db import connections
from django.test import Client

from office.runtime import host_runtime_replace
from tests.office.conftest import installed_runtime
from tests.office.fakes import InstantEngine
from tests.processing.factories import WORKER_TOKEN

PAGE_WITH_A_SESSION = [
    ("get", "/"),
    ("get", "/projects/new"),
    ("get", "/tasks/badge"),  # the task center's badge, polled by every page
    ("get", "/admin/"),
    ("get", "/admin/processing/job/"),
]


@pytest.fixture
def database_down(django_db_blocker):
    connection = connections["default"]
    saved = {key: value for key, value in connection.settings_dict.items()}
    with django_db_blocker.unblock():
        connection.close()
        connection.settings_dict.update(HOST="127.0.0.1", PORT="9")  # the discard port: connection refused
        try:
            yield
        finally:
            connection.close()
            connection.settings_dict.clear()
            connection.settings_dict.update(saved)


def _browser() -> Client:
    """A signed-in browser: its session cookie has to be looked up in the database."""
    client = Client(raise_request_exception=False)
    client.cookies["sessionid"] = "z" * 32
    return client


def _is_the_unavailable_page(response) -> bool:
    return (
        response.status_code == 503
        and response["Retry-After"] == "5"
        and b"Quire is briefly unavailable" in response.content
    )


@pytest.mark.parametrize(("method", "path"), PAGE_WITH_A_SESSION)
def test_pages_answer_503_with_retry_after_and_a_short_page(database_down, method, path):
    response = getattr(_browser(), method)(path)

    assert _is_the_unavailable_page(response), (response.status_code, response.content[:200])


def test_signing_in_answers_503_not_500(database_down):
    response = Client(raise_request_exception=False).post("/login/", {"username": "ada", "password": "secret"})

    assert _is_the_unavailable_page(response)


def test_signing_in_to_admin_answers_503_not_500(database_down):
    response = Client(raise_request_exception=False).post(
        "/admin/login/", {"username": "ada", "password": "secret", "next": "/admin/"}
    )

    assert _is_the_unavailable_page(response)


@pytest.mark.parametrize("path", ["/v1/projects", "/v1/processing/jobs"])
def test_the_api_answers_503_in_its_error_shape(database_down, path):
    client = Client(raise_request_exception=False, headers={"Authorization": "Bearer qk_" + "x" * 40})

    response = client.get(path)

    assert response.status_code == 503 and int(response["Retry-After"]) >= 1
    assert response.json()["error"]["code"] == "database_unavailable"


def test_the_worker_protocol_answers_503_so_agents_retry(configure_deployment, database_down):
    configure_deployment()
    client = Client(raise_request_exception=False, headers={"Authorization": f"Bearer {WORKER_TOKEN}"})

    processors = [{"operation": "test.echo/v1", "processor_contract": "echo/1", "slots": 2}]
    registration = {"request_id": "register-1", "instance": "t", "protocol_version": "1", "processors": processors}
    response = client.post("/internal/processing/v1/sessions", registration, content_type="application/json")

    assert response.status_code == 503 and response.json()["error"]["code"] == "database_unavailable"


def test_metrics_serve_what_needs_no_database_and_say_it_is_down(database_down):
    office = installed_runtime(InstantEngine)  # this process's Office host: figures of its own, no database
    try:
        response = Client(raise_request_exception=False).get("/metrics", REMOTE_ADDR="127.0.0.1")
    finally:
        host_runtime_replace(None)
        office.close()

    text = response.content.decode()
    assert response.status_code == 200  # a 503 would make Prometheus drop every figure
    assert "quire_database_up 0.0" in text
    assert 'quire_office_queue_length{priority="foreground"} 0.0' in text  # figures that need no database
    assert "quire_processing_queue_depth" not in text  # the database's figures are absent, not zero


@pytest.mark.django_db
def test_metrics_say_the_database_is_up_when_it_is():
    text = Client().get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()

    assert "quire_database_up 1.0" in text
    assert "quire_processing_queue_depth" in text
