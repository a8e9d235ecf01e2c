"""The operators' job page reads top-down: its header, then a timeline of every event in order (here a job
retried after a lost lease), then the failure, with the diagnostics folded away."""

import re
import time

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from processing.models import JobState, ProcessingJob
from processing.upkeep.reapers import leases_expire
from tests.factories import ProjectFactory
from tests.operators.factories import operator_user
from tests.processing.conftest import submit_build
from tests.processing.factories import WorkerSessionFactory
from tests.processing.lifecycle import build_to_success

pytestmark = pytest.mark.django_db(transaction=True)  # each step its own transaction: its own now()

LATEX = "latex.compile.pdf/v1"
# The timeline of job_retried_after_a_lost_lease, top-down.
RETRIED_AFTER_A_LOST_LEASE = [
    "submitted",
    "input captured, queued",
    "attempt 1 claimed",
    "attempt 1 lost its lease; the job went back to the queue",
    "attempt 2 claimed",
    "attempt 2 delivered its results; finalization began",
    "finalization published log",
    "finalization published pdf",
    "succeeded",
]


def job_retried_after_a_lost_lease(api_client_for, owner) -> ProcessingJob:
    from processing.queue.claims import claim_acquire

    job_id = submit_build(api_client_for(owner), ProjectFactory(owner=owner, starter=True)).json()["id"]
    first = claim_acquire(session_id=WorkerSessionFactory(processors={LATEX: 1}).pk, offers={LATEX: 1})
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE processing_processingattempt SET lease_expires_at = now() WHERE claim_id = %s",
            [first.claim_id],
        )
    time.sleep(0.01)
    assert leases_expire() == 1
    return build_to_success(job_id)


def timeline_events(page: str) -> list[str]:
    table = re.search(r"<table class=\"job-timeline\" data-timeline>(.*?)</table>", page, re.S).group(1)
    return [re.sub(r"<.*?>", "", cells[2]) for cells in re.findall(r"<tr>" + "<td[^>]*>(.*?)</td>" * 4, table, re.S)]


def test_the_timeline_lists_a_retried_jobs_events_in_order(api_client_for, owner):
    job = job_retried_after_a_lost_lease(api_client_for, owner)
    client = Client()
    client.force_login(operator_user(acting=False))

    page = client.get(reverse("admin:processing_processingjob_change", args=[job.pk])).content.decode()

    assert job.state == JobState.SUCCEEDED
    assert timeline_events(page) == RETRIED_AFTER_A_LOST_LEASE
    order = [
        page.index(mark) for mark in ("data-timeline", 'id="attempts-group"', 'id="artifacts-group"', "Diagnostics")
    ]
    assert order == sorted(order), "timeline, then attempts and artifacts, then the diagnostics"
    assert re.search(r'<fieldset class="[^"]*collapse', page) or "<details" in page, "the log is folded away"


def test_the_page_offers_its_own_actions_to_an_acting_operator_only(api_client_for, owner):
    from operators.models import OperatorAction

    job_id = submit_build(api_client_for(owner), ProjectFactory(owner=owner, starter=True)).json()["id"]
    page_url = reverse("admin:processing_processingjob_change", args=[job_id])
    looking, acting = Client(), Client()
    looking.force_login(operator_user(acting=False))
    acting.force_login(operator_user(acting=True))

    assert 'data-job-action="cancel"' not in looking.get(page_url).content.decode()
    page = acting.get(page_url).content.decode()
    assert 'data-job-action="cancel"' in page and 'data-job-action="linked"' in page
    assert 'data-job-action="retry"' not in page, "a queued job is not retryable"

    form = {"action": "cancel_jobs", "_selected_action": job_id, "confirmed": "1"}
    acting.post(reverse("admin:processing_processingjob_changelist"), form)

    assert ProcessingJob.objects.get(pk=job_id).state == JobState.CANCELLED
    assert OperatorAction.objects.get().outcome == {"cancelled": 1}
    assert 'data-job-action="cancel"' not in acting.get(page_url).content.decode()


def test_a_reused_jobs_timeline_says_its_results_were_reused_not_finalized(api_client_for, owner):
    client_of_owner = api_client_for(owner)
    project = ProjectFactory(owner=owner, starter=True)
    build_to_success(submit_build(client_of_owner, project, key="first").json()["id"])
    reused = ProcessingJob.objects.get(pk=submit_build(client_of_owner, project, key="second").json()["id"])
    client = Client()
    client.force_login(operator_user(acting=False))

    page = client.get(reverse("admin:processing_processingjob_change", args=[reused.pk])).content.decode()

    assert reused.cache_hit and reused.state == JobState.SUCCEEDED
    assert timeline_events(page) == ["submitted", "reused log", "reused pdf", "succeeded"]
