"""``/healthz``, a replica's health for the load balancer: 200 while its database answers and its wake-up
listener is connected; 503 naming the failed check otherwise."""

import pytest
from django.db import connection
from django.test import Client

from processing.queue.wakeups import wakeups

pytestmark = pytest.mark.django_db(transaction=True)  # the listener is a connection of its own


@pytest.fixture
def listener_restarted():
    """The listener starts from the state the test leaves it in, and is stopped again afterwards."""
    wakeups.stop()
    yield
    wakeups.stop()


def test_a_healthy_replica_answers_200_with_its_checks(listener_restarted):
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "checks": {"database": "ok", "wakeups": "listening"}}
    assert "Set-Cookie" not in response.headers


def test_a_replica_whose_listener_cannot_connect_is_503_and_says_so(listener_restarted, monkeypatch):
    unreachable = {**wakeups.listener_connection_params(), "host": "/nonexistent-socket-directory"}
    monkeypatch.setattr(wakeups, "listener_connection_params", lambda: unreachable)

    response = Client().get("/healthz")

    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "code": "replica_unhealthy",
        "checks": {"database": "ok", "wakeups": "not listening"},
    }


def test_a_replica_whose_database_is_unreachable_is_503(listener_restarted, monkeypatch):
    Client().get("/healthz")  # the listener is up; now the request's own connection cannot be made
    connection.close()
    monkeypatch.setitem(connection.settings_dict, "HOST", "/nonexistent-socket-directory")

    response = Client().get("/healthz")
    monkeypatch.undo()
    connection.close()

    assert response.status_code == 503
    assert response.json()["checks"] == {"database": "unreachable", "wakeups": "listening"}


def test_healthz_is_read_only():
    assert Client().post("/healthz").status_code == 405


def test_healthz_answers_over_plain_http_when_the_site_redirects_to_https(settings, listener_restarted):
    from config.https import https_settings

    for name, value in https_settings(hsts_seconds=60).items():
        setattr(settings, name, value)

    assert Client().get("/healthz").status_code == 200
    assert Client().get("/login/").status_code == 301  # the rest of the site redirects
