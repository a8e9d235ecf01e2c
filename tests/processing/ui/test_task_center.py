"""The task center's partials: what they show, to whom, and when they poll."""

import re
from datetime import timedelta

import pytest

from processing.models import JobState, ProcessingJob
from tests.factories import ProjectFactory, UserFactory
from tests.processing.conftest import submit_build
from tests.processing.lifecycle import build_to_success

pytestmark = pytest.mark.django_db

POLL = re.compile(r'hx-trigger="[^"]*every ')


def test_a_list_with_an_active_job_polls_its_row(htmx, queued_build):
    page = htmx("get", "/tasks/list").content.decode()

    assert f'id="job-{queued_build.pk}"' in page
    assert POLL.search(page)
    assert "Waiting for a worker" in page and "Cancel" in page


def test_polling_stops_when_every_job_is_terminal(htmx, queued_build, failed_build, owner_client, project):
    finished = build_to_success(submit_build(owner_client, project, key="second").json()["id"])
    assert {failed_build.state, finished.state} == {JobState.FAILED, JobState.SUCCEEDED}

    page = htmx("get", "/tasks/list").content.decode()

    assert f'id="job-{failed_build.pk}"' in page and f'id="job-{finished.pk}"' in page
    assert not POLL.search(page), "a list of finished jobs carries no polling trigger"


def test_a_row_that_finished_stops_its_own_polling(htmx, failed_build):
    response = htmx("get", f"/tasks/{failed_build.pk}", trigger=f"job-{failed_build.pk}")

    assert response.status_code == 286  # htmx stops polling this element, and still swaps the row in
    assert not POLL.search(response.content.decode())
    assert "quire:jobs-changed" in response["HX-Trigger"]


def test_an_active_row_keeps_polling(htmx, queued_build):
    response = htmx("get", f"/tasks/{queued_build.pk}")

    assert response.status_code == 200
    assert POLL.search(response.content.decode())


def test_the_badge_polls_slowly_while_something_is_active_and_not_at_all_otherwise(htmx, queued_build):
    busy = htmx("get", "/tasks/badge").content.decode()
    assert "every 15s" in busy and 'data-active="1"' in busy

    htmx("post", f"/tasks/{queued_build.pk}/cancel")
    idle = htmx("get", "/tasks/badge").content.decode()
    assert not POLL.search(idle) and 'data-active="0"' in idle


def test_the_badge_counts_failures_only_after_the_last_look(htmx, failed_build):
    def badge(seen):
        return htmx("get", "/tasks/badge", {"seen": seen}).content.decode()

    assert 'data-failed="1"' in badge((failed_build.completed_at - timedelta(seconds=1)).isoformat())
    assert 'data-failed="0"' in badge((failed_build.completed_at + timedelta(seconds=1)).isoformat())
    assert 'data-failed="0"' in badge("now")  # the drawer is open
    assert 'data-failed="1"' in badge("")  # this browser never looked: the last day's failures count


def test_a_failed_row_says_what_happened_in_words_and_shows_diagnostics_with_file_and_line(htmx, failed_build):
    row = htmx("get", f"/tasks/{failed_build.pk}").content.decode()
    assert "LaTeX stopped with an error." in row and "processor_rejected" in row  # the code, for who wants it
    assert "main.tex:4: Undefined control sequence." in row
    assert "Rebuild" in row and "Retry" not in row and "Cancel" not in row  # the content's fault

    diagnostics = htmx("get", f"/tasks/{failed_build.pk}/diagnostics").content.decode()
    assert "main.tex:4" in diagnostics and "! Undefined control sequence." in diagnostics


def test_a_succeeded_row_links_its_downloads(htmx, owner_client, project):
    job = build_to_success(submit_build(owner_client, project).json()["id"])
    pdf = job.artifacts.get(role="pdf")

    row = htmx("get", f"/tasks/{job.pk}").content.decode()

    assert f"/v1/processing/jobs/{job.pk}/artifacts/{pdf.pk}" in row
    assert "Download main.pdf" in row and "Succeeded" in row


def test_another_users_job_never_appears(htmx, queued_build, api_client_for, owner, project):
    stranger = UserFactory()
    theirs = ProjectFactory(owner=stranger, starter=True)
    their_job = submit_build(api_client_for(stranger), theirs, key="theirs").json()["id"]

    page = htmx("get", "/tasks/list").content.decode() + htmx("get", "/tasks").content.decode()

    assert str(queued_build.pk) in page and their_job not in page
    for route in ("", "/diagnostics"):
        assert htmx("get", f"/tasks/{their_job}{route}").status_code == 404
    assert htmx("post", f"/tasks/{their_job}/cancel").status_code == 404
    assert htmx("post", f"/tasks/{their_job}/retry").status_code == 404
    assert ProcessingJob.objects.get(pk=their_job).state == JobState.QUEUED
    assert 'data-active="1"' in htmx("get", "/tasks/badge").content.decode()  # only mine is counted


def test_cancel_from_the_row_cancels_a_queued_job(htmx, queued_build):
    response = htmx("post", f"/tasks/{queued_build.pk}/cancel")

    assert ProcessingJob.objects.get(pk=queued_build.pk).state == JobState.CANCELLED
    assert "Cancelled" in response.content.decode() and not POLL.search(response.content.decode())


def test_retry_from_the_row_creates_a_linked_job_and_reloads_the_list(htmx, limit_failed_build):
    failed_build = limit_failed_build
    row = htmx("get", f"/tasks/{failed_build.pk}").content.decode()
    assert "Retry" in row and "Rebuild" not in row and "took too long or produced too much" in row

    response = htmx("post", f"/tasks/{failed_build.pk}/retry")
    again = htmx("post", f"/tasks/{failed_build.pk}/retry")

    retry = ProcessingJob.objects.get(retry_of_id=failed_build.pk)
    assert retry.state == JobState.QUEUED and retry.input_blob_id == failed_build.input_blob_id
    assert ProcessingJob.objects.get(pk=failed_build.pk).state == JobState.FAILED
    assert "quire:job-submitted" in response["HX-Trigger"] and "Retried as a new job" in response.content.decode()
    assert again.status_code == 200 and ProcessingJob.objects.filter(retry_of_id=failed_build.pk).count() == 1


def test_rebuild_from_a_content_failure_builds_the_current_text_as_a_new_job(htmx, failed_build, owner):
    from workspace import services as workspace_services

    workspace_services.file_write(
        actor_id=owner.pk, project_id=failed_build.project_id, path="main.tex", data=b"\\relax fixed"
    )
    response = htmx("post", f"/tasks/{failed_build.pk}/rebuild", {"idempotency_key": "rebuild-1"})
    again = htmx("post", f"/tasks/{failed_build.pk}/rebuild", {"idempotency_key": "rebuild-1"})

    rebuilt = ProcessingJob.objects.exclude(pk=failed_build.pk).get(project_id=failed_build.project_id)
    assert rebuilt.retry_of_id is None and rebuilt.input_digest != failed_build.input_digest  # a fresh capture
    assert rebuilt.captured["documents"] == [["main.tex", 2]]
    assert "Rebuilding from the current text." in response.content.decode()
    assert "quire:job-submitted" in response["HX-Trigger"]
    assert again.status_code == 200 and ProcessingJob.objects.filter(project_id=failed_build.project_id).count() == 2


def test_retry_is_refused_for_a_content_failure(htmx, failed_build):
    response = htmx("post", f"/tasks/{failed_build.pk}/retry")

    assert "Retried" not in response.content.decode()
    assert not ProcessingJob.objects.filter(retry_of_id=failed_build.pk).exists()


def test_the_full_page_lists_the_jobs_for_small_screens(browser, queued_build):
    page = browser.get("/tasks").content.decode()

    assert 'class="tasks-page"' in page and f'id="job-{queued_build.pk}"' in page


def test_every_page_has_the_task_center_button(browser, project):
    page = browser.get(f"/projects/{project.pk}/").content.decode()

    assert 'id="task-center-button"' in page and 'aria-controls="task-drawer"' in page
    assert 'id="task-announcer"' in page and 'aria-live="polite"' in page


def test_a_polled_row_whose_job_is_no_longer_visible_stops_polling(htmx, queued_build, owner):
    from access.models import ProjectGrant

    ProjectGrant.objects.filter(project_id=queued_build.project_id, user=owner).delete()
    response = htmx("get", f"/tasks/{queued_build.pk}", trigger=f"job-{queued_build.pk}")

    assert response.status_code == 286
    assert "no longer available" in response.content.decode()
    assert not POLL.search(response.content.decode())


def test_a_superseded_build_says_so_and_the_status_names_the_newer_one(htmx, owner_client, project):
    older = submit_build(owner_client, project, key="typed-1", body={"supersede": True}).json()
    newer = submit_build(owner_client, project, key="typed-2", body={"supersede": True}).json()

    row = htmx("get", f"/tasks/{older['id']}").content.decode()
    status = htmx("get", f"/projects/{project.pk}/processing/build-status").content.decode()

    assert ">Superseded<" in row and "Stopped with an error" not in row
    assert f'data-job-id="{newer["id"]}"' in status
