"""Build when I stop typing supersedes: a newer build of the same project by the same requester ends the ones
still waiting in the queue as ``superseded`` (not a failure), and they do not count against the limits."""

import pytest

from processing.models import JobState, ProcessingJob
from tests.processing.conftest import submit_build

pytestmark = pytest.mark.django_db

AUTO = {"supersede": True}


def test_a_newer_build_supersedes_the_queued_one(owner_client, project):
    older = submit_build(owner_client, project, key="typed-1", body=AUTO).json()
    newer = submit_build(owner_client, project, key="typed-2", body=AUTO).json()

    ended = owner_client.get(f"/v1/processing/jobs/{older['id']}").json()
    assert (ended["state"], ended["superseded"], ended["failure"]) == ("cancelled", True, None)
    assert ProcessingJob.objects.get(pk=newer["id"]).state == JobState.QUEUED


def test_a_build_without_supersede_leaves_the_queue_alone(owner_client, project):
    older = submit_build(owner_client, project, key="click-1").json()
    submit_build(owner_client, project, key="click-2", body={"compiler": "xelatex"})

    assert ProcessingJob.objects.get(pk=older["id"]).state == JobState.QUEUED


def test_a_running_build_is_left_to_finish(owner_client, project):
    running = submit_build(owner_client, project, key="typed-1", body=AUTO).json()
    ProcessingJob.objects.filter(pk=running["id"]).update(state=JobState.RUNNING)

    submit_build(owner_client, project, key="typed-2", body=AUTO)

    assert ProcessingJob.objects.get(pk=running["id"]).state == JobState.RUNNING


def test_only_the_requesters_own_builds_of_that_project_are_superseded(owner_client, project, owner):
    from tests.factories import ProjectFactory

    elsewhere = ProjectFactory(owner=owner, starter=True)
    other_project = submit_build(owner_client, elsewhere, key="other", body=AUTO).json()

    submit_build(owner_client, project, key="here", body=AUTO)

    assert ProcessingJob.objects.get(pk=other_project["id"]).state == JobState.QUEUED


def test_a_superseded_build_does_not_count_against_the_requesters_limit(owner_client, project, configure_deployment):
    configure_deployment(limits={"active_jobs_per_requester": 1})
    submit_build(owner_client, project, key="typed-1", body=AUTO)

    refused = submit_build(owner_client, project, key="clicked")
    accepted = submit_build(owner_client, project, key="typed-2", body=AUTO)

    assert refused.status_code == 429
    assert accepted.status_code == 202, accepted.json()


@pytest.mark.parametrize("body", [{"clean": "yes"}, {"supersede": 1}, {"clean": None, "supersede": "true"}])
def test_the_flags_are_true_or_false(owner_client, project, body):
    response = submit_build(owner_client, project, key="bad", body=body)

    assert response.status_code == 400
    assert response.json()["error"]["details"]["option"] in ("clean", "supersede")
    assert not ProcessingJob.objects.exists()


def test_false_flags_are_the_same_command_as_none(owner_client, project):
    first = submit_build(owner_client, project, key="same", body={"clean": False, "supersede": False}).json()
    replay = submit_build(owner_client, project, key="same", body={}).json()

    assert first["id"] == replay["id"]
