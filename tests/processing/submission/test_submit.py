import threading
from datetime import timedelta

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from access.services import member_set
from processing.models import IdempotencyReservation, ProcessingJob
from processing.submission.submit import preparations_abandoned_fail
from processing.upkeep.reapers import sweep
from tests.concurrency import run_together
from tests.factories import ProjectFactory, UserFactory
from tests.processing.conftest import submit_build
from tests.processing.factories import JobFactory
from tests.processing.sweeps import SWEEP_DATABASES
from tests.processing.worker_calls import ECHO
from workspace import services as workspace_services

pytestmark = pytest.mark.django_db


def test_a_build_is_accepted_as_a_queued_job(owner_client, project, owner):
    response = submit_build(owner_client, project)

    assert response.status_code == 202
    job = response.json()
    assert job["operation"] == "latex.compile.pdf/v1"
    assert (job["state"], job["phase"]) == ("queued", "waiting_for_worker")
    assert job["project_id"] == str(project.pk)
    assert job["requester"] == owner.username
    assert job["cancellable"] is True and job["cache_hit"] is False
    assert job["failure"] is None and job["artifacts"] == []
    stored = ProcessingJob.objects.get(pk=job["id"])
    assert stored.input_blob_id is not None and len(stored.input_digest) == 64


def test_the_same_key_and_command_returns_the_original_job(owner_client, project):
    first = submit_build(owner_client, project, key="build-1")
    again = submit_build(owner_client, project, key="build-1")

    assert again.status_code == 200
    assert again["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert ProcessingJob.objects.count() == 1


def test_defaulted_options_and_key_order_do_not_change_the_command(owner_client, project):
    first = submit_build(owner_client, project, key="k", body={})
    again = submit_build(owner_client, project, key="k", body={"compiler": None})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]


def test_the_same_key_with_another_command_is_409(owner_client, project):
    submit_build(owner_client, project, key="k")
    response = submit_build(owner_client, project, key="k", body={"compiler": "xelatex"})

    assert response.status_code == 409
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert ProcessingJob.objects.count() == 1


def test_the_same_key_from_another_user_is_an_independent_job(owner_client, api_client_for, project, owner):
    colleague = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=colleague.username, role="editor")
    mine = submit_build(owner_client, project, key="shared")
    theirs = submit_build(api_client_for(colleague), project, key="shared")

    assert theirs.status_code == 202
    assert theirs.json()["id"] != mine.json()["id"]


@pytest.mark.parametrize(
    ("key", "status", "code"),
    [
        (None, 428, "idempotency_key_required"),
        ("", 428, "idempotency_key_required"),
        ("x" * 129, 400, "idempotency_key_invalid"),
        ("tab\there", 400, "idempotency_key_invalid"),
        ("naïve", 400, "idempotency_key_invalid"),
    ],
)
def test_bad_idempotency_keys_are_refused_and_create_nothing(owner_client, project, key, status, code):
    headers = {} if key is None else {"HTTP_IDEMPOTENCY_KEY": key}
    response = owner_client.post(f"/v1/projects/{project.pk}/builds", {}, format="json", **headers)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert ProcessingJob.objects.count() == 0 and IdempotencyReservation.objects.count() == 0


def test_a_build_of_a_typst_project_is_a_typst_build(owner_client, owner, configure_deployment):
    configure_deployment(operations=["latex.compile.pdf/v1", "typst.compile.pdf/v1"])
    typst = ProjectFactory(owner=owner, project_type="typst", starter=True)
    response = submit_build(owner_client, typst)
    assert response.status_code == 202
    assert ProcessingJob.objects.get(pk=response.json()["id"]).operation == "typst.compile.pdf/v1"


def test_a_typst_project_cannot_be_built_with_latex(owner, configure_deployment):
    from processing.exceptions import ProjectTypeUnsupported
    from processing.submission.submit import job_submit

    configure_deployment(operations=["latex.compile.pdf/v1", "typst.compile.pdf/v1"])
    typst = ProjectFactory(owner=owner, project_type="typst", starter=True)
    with pytest.raises(ProjectTypeUnsupported):
        job_submit(actor_id=owner.pk, operation_name="latex.compile.pdf/v1", idempotency_key="k", project_id=typst.pk)
    assert ProcessingJob.objects.count() == 0


@pytest.mark.parametrize(
    "body",
    [{"engine": "tex"}, {"compiler": "word"}, {"compiler": 3}, {"compiler": []}, {"compiler": {"a": 1}}, [1, 2], "x"],
)
def test_invalid_build_options_are_refused(owner_client, project, body):
    response = submit_build(owner_client, project, body=body)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"invalid_options", "malformed_request"}
    assert ProcessingJob.objects.count() == 0


def test_an_operation_this_deployment_does_not_enable_is_404(owner_client, owner):
    typst = ProjectFactory(owner=owner, project_type="typst", starter=True)
    response = owner_client.post(f"/v1/projects/{typst.pk}/exports/pptx", HTTP_IDEMPOTENCY_KEY="k")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "operation_not_enabled"


def test_build_needs_the_build_permission(api_client_for, project, owner):
    viewer = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=viewer.username, role="viewer")
    response = submit_build(api_client_for(viewer), project)
    assert response.status_code == 403
    assert ProcessingJob.objects.count() == 0


def test_build_of_a_project_you_cannot_see_is_404(api_client_for, project):
    response = submit_build(api_client_for(UserFactory()), project)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "project_not_found"
    assert ProcessingJob.objects.count() == 0


def test_requester_active_limit_is_429_with_retry_after(owner_client, project, owner, configure_deployment):
    configure_deployment(limits={"active_jobs_per_requester": 2})
    other = ProjectFactory(owner=owner, starter=True)
    submit_build(owner_client, project, key="a")
    submit_build(owner_client, other, key="b")

    response = submit_build(owner_client, other, key="c")

    assert response.status_code == 429
    assert response.json()["error"]["code"] == "too_many_active_jobs"
    assert response.json()["error"]["details"]["scope"] == "requester"
    assert int(response["Retry-After"]) > 0
    assert ProcessingJob.objects.count() == 2 and IdempotencyReservation.objects.count() == 2


def test_project_active_limit_is_429(owner_client, api_client_for, project, owner, configure_deployment):
    configure_deployment(limits={"active_jobs_per_project": 1})
    colleague = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=colleague.username, role="editor")
    submit_build(owner_client, project, key="a")

    response = submit_build(api_client_for(colleague), project, key="b")

    assert response.status_code == 429
    assert response.json()["error"]["details"]["scope"] == "project"
    assert ProcessingJob.objects.count() == 1


def test_global_queue_limit_is_503_with_retry_after(owner_client, project, owner, configure_deployment):
    configure_deployment(limits={"queued_jobs_global": 1})
    submit_build(owner_client, project, key="a")
    response = submit_build(owner_client, ProjectFactory(owner=owner, starter=True), key="b")

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "queue_full"
    assert "Retry-After" in response
    assert ProcessingJob.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_submissions_with_one_key_make_one_job(api_client_for, owner):
    project = ProjectFactory(owner=owner, starter=True)
    start = threading.Barrier(50)
    results: list[tuple[int, str]] = []
    lock = threading.Lock()

    def submit():
        client = api_client_for(owner)
        try:
            start.wait()
            response = submit_build(client, project, key="one-key")
            with lock:
                results.append((response.status_code, response.json()["id"]))
        finally:
            connection.close()

    threads = [threading.Thread(target=submit) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == 50
    assert len({job_id for _, job_id in results}) == 1
    assert sorted(status for status, _ in results).count(202) == 1
    assert ProcessingJob.objects.filter(project_id=project.pk).count() == 1


def test_a_failed_preparation_releases_its_pin_and_fails_the_job(owner_client, project, monkeypatch):
    from processing.submission import capture
    from workspace.models import SnapshotPin

    def storage_outage(*, snapshot):
        raise OSError("storage is unreachable")
        yield  # a generator, like the real one

    monkeypatch.setattr(capture.workspace, "snapshot_contents", storage_outage)

    response = submit_build(owner_client, project, key="doomed")

    assert response.status_code == 202
    body = response.json()
    assert body["state"] == "failed" and body["failure"]["class"] == "transient_infrastructure"
    assert not SnapshotPin.objects.exists()


def test_a_project_deleted_during_preparation_fails_the_job_as_invalid_input(owner_client, project, monkeypatch):
    from processing.submission import capture

    def project_gone(*, project_id):
        raise capture.workspace.WorkspaceError("The project is gone.")

    monkeypatch.setattr(capture.workspace, "snapshot_freeze", project_gone)
    body = submit_build(owner_client, project, key="gone").json()

    assert body["state"] == "failed" and body["failure"]["class"] == "invalid_input"


def a_submission_whose_request_dies_after_reserving(owner_client, project, monkeypatch, key: str) -> str:
    from processing.submission import submit as submission

    prepare = submission._prepare
    monkeypatch.setattr(submission, "_prepare", lambda *args, **kwargs: None)
    job_id = submit_build(owner_client, project, key=key).json()["id"]
    monkeypatch.setattr(submission, "_prepare", prepare)
    assert ProcessingJob.objects.get(pk=job_id).state == "preparing"
    return job_id


def a_dead_preparation_whose_lease_ran_out(owner_client, project, monkeypatch, key: str) -> str:
    job_id = a_submission_whose_request_dies_after_reserving(owner_client, project, monkeypatch, key)
    ProcessingJob.objects.filter(pk=job_id).update(preparation_lease_until=timezone.now() - timedelta(hours=1))
    return job_id


def preparations_counted(monkeypatch) -> list:
    """From now on every preparation appends to the returned list before it runs."""
    from processing.submission import submit as submission

    prepared, prepare = [], submission._prepare

    def counted(*args, **kwargs):
        prepared.append(True)
        return prepare(*args, **kwargs)

    monkeypatch.setattr(submission, "_prepare", counted)
    return prepared


def test_a_retry_takes_over_a_preparation_whose_request_died_once_its_lease_ran_out(owner_client, project, monkeypatch):
    job_id = a_submission_whose_request_dies_after_reserving(owner_client, project, monkeypatch, "died")
    ProcessingJob.objects.filter(pk=job_id).update(preparation_lease_until=timezone.now() - timedelta(hours=1))

    retried = submit_build(owner_client, project, key="died")

    assert (retried.json()["id"], retried.json()["state"]) == (job_id, "queued")
    assert ProcessingJob.objects.count() == 1


def test_a_retry_leaves_a_preparation_whose_lease_holds_to_its_request(owner_client, project, monkeypatch):
    job_id = a_submission_whose_request_dies_after_reserving(owner_client, project, monkeypatch, "slow")
    lease = ProcessingJob.objects.get(pk=job_id).preparation_lease_until
    assert lease > timezone.now() + timedelta(seconds=20)  # the deployment's 30 s, less this test's own time

    replayed = submit_build(owner_client, project, key="slow")

    assert (replayed.json()["id"], replayed.json()["state"]) == (job_id, "preparing")
    assert ProcessingJob.objects.get(pk=job_id).preparation_lease_until == lease


@pytest.mark.django_db(transaction=True)
def test_of_two_retries_of_a_dead_preparation_at_the_same_moment_one_takes_it_over(
    owner_client, api_client_for, owner, project, monkeypatch
):
    job_id = a_dead_preparation_whose_lease_ran_out(owner_client, project, monkeypatch, "both")
    prepared = preparations_counted(monkeypatch)
    results = []

    def retry():
        results.append(submit_build(api_client_for(owner), project, key="both").json())

    errors = run_together(retry, retry)

    assert errors == []
    assert prepared == [True]
    assert {body["id"] for body in results} == {job_id}
    assert ProcessingJob.objects.get(pk=job_id).state == "queued"


@pytest.mark.django_db(databases=SWEEP_DATABASES)
def test_the_maintenance_loop_fails_a_project_job_whose_request_died_rather_than_capture_later_edits(
    owner, owner_client, project, monkeypatch
):
    """The client's retry came while the dying request still held the lease, got the job id and went away: no
    retry will prepare it. Capturing the project later would build whatever was typed after the click, so once
    the lease runs out (not at the preparation deadline) the loop fails the job, saying why."""
    job_id = a_submission_whose_request_dies_after_reserving(owner_client, project, monkeypatch, "orphaned")
    submit_build(owner_client, project, key="orphaned")  # the replay, answered "preparing"
    workspace_services.file_write(
        actor_id=owner.pk, project_id=project.pk, path="main.tex", data=b"% typed after the click\n"
    )

    assert sweep().counts["preparations_abandoned"] == 0, "the lease still holds"
    ProcessingJob.objects.filter(pk=job_id).update(preparation_lease_until=timezone.now() - timedelta(hours=1))
    assert sweep().counts["preparations_abandoned"] == 1

    job = ProcessingJob.objects.get(pk=job_id)
    assert (job.state, job.failure_class, job.failure_code) == (
        "failed",
        "transient_infrastructure",
        "preparation_abandoned",
    )
    assert job.input_blob_id is None and not job.captured, "nothing typed after the click was captured"
    assert "before the project's files were captured" in job.failure_message


def test_a_preparation_that_broke_off_lets_its_lease_go_so_the_retry_prepares_at_once(owner, project, monkeypatch):
    from processing.submission import submit as submission

    def database_gone(*args, **kwargs):
        raise OperationalError("the connection was lost while recording the failure")

    monkeypatch.setattr(submission, "_prepare", database_gone)
    with pytest.raises(OperationalError):
        submission.job_submit(actor_id=owner.pk, operation_name=ECHO, idempotency_key="cut", project_id=project.pk)
    job = ProcessingJob.objects.get(project_id=project.pk)
    assert (job.state, job.preparation_lease_until) == ("preparing", None)

    monkeypatch.undo()
    retried = submission.job_submit(
        actor_id=owner.pk, operation_name=ECHO, idempotency_key="cut", project_id=project.pk
    )

    assert retried.job_id == job.pk
    assert ProcessingJob.objects.get(pk=job.pk).state == "queued"


def test_an_uploads_preparation_is_left_to_a_retry_that_carries_its_bytes(owner):
    from processing.operations import PPTX_IMPORT_TYPST

    upload_job = JobFactory(
        preparing=True,
        operation=PPTX_IMPORT_TYPST.name,
        requester=owner,
        input_filename="deck.pptx",
        preparation_lease_until=timezone.now() - timedelta(hours=1),
    )

    assert preparations_abandoned_fail() == 0
    assert ProcessingJob.objects.get(pk=upload_job.pk).state == "preparing"


@pytest.mark.django_db(transaction=True)
def test_a_late_retry_and_the_maintenance_loop_at_the_same_moment_end_the_job_once(
    owner_client, api_client_for, owner, project, monkeypatch
):
    """Whichever takes the lease first decides: the retry prepares the job (it is asked for again now), or the
    loop fails it as abandoned; never both."""
    job_id = a_dead_preparation_whose_lease_ran_out(owner_client, project, monkeypatch, "late")
    prepared = preparations_counted(monkeypatch)
    failed = []

    def retry():
        submit_build(api_client_for(owner), project, key="late")

    def loop():
        failed.append(preparations_abandoned_fail())

    errors = run_together(retry, loop)

    assert errors == []
    state = ProcessingJob.objects.get(pk=job_id).state
    assert (state, prepared, failed) in (("queued", [True], [0]), ("failed", [], [1]))


def test_a_key_whose_earlier_outcome_vanished_is_503_outcome_unresolved_and_changes_nothing(
    owner_client, project, monkeypatch
):
    """The key was held when this request tried to reserve it, and its reservation was reaped before it could be
    read (it had expired): the earlier outcome is unknown, so the client is told to retry, not given a 500."""
    from processing.submission import submit

    monkeypatch.setattr(submit, "reservation_insert", lambda scope, hours: None)  # as if another request held it

    response = submit_build(owner_client, project, key="vanished")

    assert response.status_code == 503
    assert response.json()["error"]["code"] == "outcome_unresolved"
    assert response["Retry-After"] == "1"
    assert not ProcessingJob.objects.exists() and not IdempotencyReservation.objects.exists()
