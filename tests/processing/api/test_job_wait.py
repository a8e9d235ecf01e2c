"""Waiting for a job's end: ``GET /v1/processing/jobs/{id}?wait=…`` answers once the job ends, woken by NOTIFY."""

import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from access.models import ApiToken
from processing.models import JobState, ProcessingJob
from processing.queue.wakeups import wakeups
from tests.factories import ProjectFactory, UserFactory
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_to_success

pytestmark = pytest.mark.django_db(transaction=True)


def _listener_connected() -> None:
    wakeups.generation()  # starts the listener
    deadline = time.monotonic() + 10
    while not wakeups.connected:
        assert time.monotonic() < deadline, "the notification listener did not connect"
        time.sleep(0.01)


def _finish_when_watched(job_id, *, meanwhile=lambda: None) -> threading.Thread:
    """Build ``job_id`` to success on its own thread and connection, once a request watches it
    (calling ``meanwhile`` first, while the request waits)."""

    def run():
        try:
            while not wakeups.is_watched(job_id):
                time.sleep(0.01)
            meanwhile()
            build_to_success(job_id)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_waiting_request_answers_with_the_ended_job(owner_client, project):
    job_id = submit_build(owner_client, project).json()["id"]
    finisher = _finish_when_watched(job_id)

    body = owner_client.get(f"/v1/processing/jobs/{job_id}?wait=20").json()

    finisher.join(timeout=20)
    assert body["state"] == "succeeded"
    assert {artifact["role"] for artifact in body["artifacts"]} == {"pdf", "log"}


def test_a_waiting_request_holds_no_database_connection(owner_client, project):
    job_id = submit_build(owner_client, project).json()["id"]
    requests_connection = connections["default"]  # this thread's, which serves the request below
    seen = {}

    def connection_while_waiting():  # the request reads the job after registering its watch, then waits
        deadline = time.monotonic() + 5
        while requests_connection.connection is not None and time.monotonic() < deadline:
            time.sleep(0.01)
        seen["open"] = requests_connection.connection is not None

    finisher = _finish_when_watched(job_id, meanwhile=connection_while_waiting)

    owner_client.get(f"/v1/processing/jobs/{job_id}?wait=20")

    finisher.join(timeout=20)
    assert seen == {"open": False}


def test_the_watch_is_woken_by_the_jobs_end_and_not_by_another_jobs(owner, owner_client, project):
    _listener_connected()
    other_project = ProjectFactory(owner=owner, starter=True)
    other = submit_build(owner_client, other_project, key="other").json()["id"]  # first in line for the claim
    watched = submit_build(owner_client, project, key="watched").json()["id"]

    # Watching `other` too lets the helper finish it at once.
    with wakeups.job_watch(other), wakeups.job_watch(watched) as watch:
        _finish_when_watched(other).join(timeout=20)
        assert ProcessingJob.objects.get(pk=other).state == JobState.SUCCEEDED
        assert watch.wait(0.5) is False, "another job's end woke this watch"
        _finish_when_watched(watched).join(timeout=20)
        assert watch.wait(20) is True, "the job's end did not wake its watch"


def test_a_wait_that_runs_out_answers_with_the_job_as_it_is(owner_client, project):
    job_id = submit_build(owner_client, project).json()["id"]

    response = owner_client.get(f"/v1/processing/jobs/{job_id}?wait=0.2")

    assert response.status_code == 200 and response.json()["state"] == "queued"


@pytest.mark.parametrize("wait", ["-1", "31", "soon", "nan", "inf"])
def test_a_wait_out_of_range_is_refused(owner_client, project, wait):
    job_id = submit_build(owner_client, project).json()["id"]

    response = owner_client.get(f"/v1/processing/jobs/{job_id}?wait={wait}")

    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid_options"


def test_another_users_job_is_not_found_even_when_waiting(api_client_for, owner_client, project):
    job_id = submit_build(owner_client, project).json()["id"]

    response = api_client_for(UserFactory()).get(f"/v1/processing/jobs/{job_id}?wait=20")

    assert response.status_code == 404
    assert not wakeups.is_watched(job_id)


def _signed_in_client(user):
    client = Client()
    client.force_login(user)
    return client


def _signed_out(session_cookie: str) -> None:
    elsewhere = Client()  # the waiting client is busy with its request
    elsewhere.cookies["sessionid"] = session_cookie
    assert elsewhere.post(reverse("access:logout")).status_code == 302


ENDINGS = {
    "token_revoked": lambda user, client: ApiToken.objects.filter(user=user).update(revoked_at=timezone.now()),
    "signed_out": lambda user, client: _signed_out(client.cookies["sessionid"].value),
    "deactivated": lambda user, client: get_user_model().objects.filter(pk=user.pk).update(is_active=False),
    "password_changed": lambda user, client: (user.set_password("changed meanwhile"), user.save()),
}


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_wait_ends_not_authenticated_once_its_sign_in_ends(owner, owner_client, project, ending):
    job_id = submit_build(owner_client, project).json()["id"]
    waiter = owner_client if ending == "token_revoked" else _signed_in_client(owner)
    watched = threading.Event()

    def end_the_sign_in_once_watched():
        try:
            while not wakeups.is_watched(job_id):
                time.sleep(0.01)
            ENDINGS[ending](owner, waiter)
            watched.set()
        finally:
            connection.close()

    ender = threading.Thread(target=end_the_sign_in_once_watched, daemon=True)
    ender.start()

    # The job never ends and the wait would last 30 s: only the access check can answer before.
    response = waiter.get(f"/v1/processing/jobs/{job_id}?wait=30")

    ender.join(timeout=30)
    assert watched.is_set()
    assert (response.status_code, response.json()["error"]["code"]) == (401, "not_authenticated")
