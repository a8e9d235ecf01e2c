"""The status beside Build PDF says what the caller's latest build is doing, as the task center does."""

import pytest
from django.test import Client

from processing.queue.pauses import operation_pause
from processing.submission.submit import job_submit
from processing.ui.build_status import build_status_for
from tests.operators.factories import operator_user

pytestmark = pytest.mark.django_db

LATEX = "latex.compile.pdf/v1"


def test_a_build_waiting_behind_an_operators_pause_says_so_on_the_project_page(owner, project):
    job_submit(actor_id=owner.pk, operation_name=LATEX, idempotency_key="paused", project_id=project.pk)
    assert operation_pause(actor=operator_user(acting=True), operation=LATEX)

    status = build_status_for(user_id=owner.pk, project_id=project.pk)
    client = Client()
    client.force_login(owner)
    page = client.get(f"/projects/{project.pk}/processing/build-status").content.decode()

    assert status.active and "an operator has paused" in status.phase_text
    assert "an operator has paused" in page


def test_a_queued_build_nobody_paused_says_it_waits_for_a_worker(owner, project):
    job_submit(actor_id=owner.pk, operation_name=LATEX, idempotency_key="queued", project_id=project.pk)

    status = build_status_for(user_id=owner.pk, project_id=project.pk)

    assert status.active and "paused" not in status.phase_text and status.phase_text


def test_after_a_failed_build_the_older_pdfs_word_count_is_not_shown_beside_the_failure(owner, project):
    from processing.queue.delivery import Diagnostics, attempt_fail
    from tests.processing.lifecycle import build_claimed, build_to_success
    from workspace import services as workspace_services

    first = job_submit(actor_id=owner.pk, operation_name=LATEX, idempotency_key="built", project_id=project.pk)
    build_to_success(first.job_id, words=321)
    assert build_status_for(user_id=owner.pk, project_id=project.pk).output.words == 321

    broken = b"\\documentclass{article}\\begin{document}\\undefined\\end{document}\n"
    workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path="main.tex", data=broken)
    failing = job_submit(actor_id=owner.pk, operation_name=LATEX, idempotency_key="broken", project_id=project.pk)
    claim = build_claimed(failing.job_id)
    attempt_fail(
        claim_id=claim.claim_id,
        failure_class="processor_rejected",
        code="latex_error",
        message="main.tex:1: Undefined control sequence",
        diagnostics=Diagnostics(log="! Undefined control sequence."),
    )

    status = build_status_for(user_id=owner.pk, project_id=project.pk)
    assert status.state == "failed" and status.output is not None
    assert status.output.words is None
