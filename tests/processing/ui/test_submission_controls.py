"""Contextual submission: Build PDF on the project page, the export menu, PPTX import on the new-project page."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from access.services import member_set
from processing.models import JobState, ProcessingJob
from tests.factories import ProjectFactory, UserFactory
from tests.processing.factories import JobFactory, WorkerSessionFactory
from tests.processing.submission.test_pptx_checks import PPTX, package

pytestmark = pytest.mark.django_db

LATEX = "latex.compile.pdf/v1"
KEY = re.compile(r'name="idempotency_key" id="([\w-]+)" value="(\w+)"')


def _actions(htmx, project) -> str:
    return htmx("get", f"/projects/{project.pk}/processing/actions").content.decode()


def test_every_render_of_the_build_form_carries_a_fresh_key(htmx, project):
    first, second = KEY.search(_actions(htmx, project)), KEY.search(_actions(htmx, project))

    assert first.group(1) == "build-key" and first.group(2) != second.group(2)


def test_build_pdf_submits_with_the_chosen_compiler(htmx, project):
    response = htmx("post", f"/projects/{project.pk}/processing/build", {"idempotency_key": "k", "compiler": "xelatex"})

    job = ProcessingJob.objects.get(project_id=project.pk)
    assert job.state == JobState.QUEUED and job.options == {"compiler": "xelatex"}
    assert "quire:job-submitted" in response["HX-Trigger"]
    fresh = KEY.search(response.content.decode())
    assert fresh.group(1) == "build-key" and 'hx-swap-oob="true"' in response.content.decode()


def test_recompile_from_scratch_and_build_when_i_stop_typing_post_their_flags(htmx, project):
    htmx("post", f"/projects/{project.pk}/processing/build", {"idempotency_key": "menu", "clean": "1"})
    htmx("post", f"/projects/{project.pk}/processing/build", {"idempotency_key": "paused", "supersede": "1"})

    options = list(ProcessingJob.objects.filter(project_id=project.pk).order_by("created_at").values_list("options"))
    assert options == [({"clean": True},), ({"supersede": True},)]


def test_a_latex_project_offers_the_build_menu_and_a_typst_one_its_preview_instead(
    htmx, project, owner, configure_deployment
):
    configure_deployment(operations=[LATEX, "typst.compile.pdf/v1"])
    typst = ProjectFactory(owner=owner, project_type="typst", starter=True)

    latex_actions, typst_actions = _actions(htmx, project), _actions(htmx, typst)

    assert "Recompile from scratch" in latex_actions and 'id="auto-build"' in latex_actions
    assert "Recompile from scratch" not in typst_actions and 'id="auto-build"' not in typst_actions
    assert "live preview follows your typing" in typst_actions


def test_the_same_form_sent_twice_is_one_job(htmx, project):
    for _ in range(2):
        response = htmx("post", f"/projects/{project.pk}/processing/build", {"idempotency_key": "double-click"})

    assert ProcessingJob.objects.filter(project_id=project.pk).count() == 1
    assert "Already submitted" in response.content.decode()


def test_waiting_capability_is_said_before_submitting(htmx, project):
    assert "Workers offline — the job will wait" in _actions(htmx, project)

    WorkerSessionFactory(processors={LATEX: 1})
    assert "Workers offline" not in _actions(htmx, project)


def test_a_waiting_submission_says_the_job_will_wait(htmx, project):
    response = htmx("post", f"/projects/{project.pk}/processing/build", {"idempotency_key": "k", "waiting": "1"})

    assert "the job will wait" in response.content.decode()


def test_queue_exhaustion_shows_the_apis_message(htmx, project, configure_deployment):
    configure_deployment(limits={"active_jobs_per_requester": 1})
    htmx("post", f"/projects/{project.pk}/processing/build", {"idempotency_key": "one"})

    second = {"idempotency_key": "two", "compiler": "xelatex"}
    response = htmx("post", f"/projects/{project.pk}/processing/build", second)

    page = response.content.decode()
    assert "You already have the most active jobs allowed; retry when some finish." in page
    assert 'role="alert"' in page and "HX-Trigger" not in response
    assert ProcessingJob.objects.filter(project_id=project.pk).count() == 1


def test_a_full_queue_shows_its_message(htmx, owner, project, configure_deployment):
    configure_deployment(limits={"queued_jobs_global": 1})
    htmx("post", f"/projects/{project.pk}/processing/build", {"idempotency_key": "one"})

    other = ProjectFactory(owner=owner, starter=True)
    response = htmx("post", f"/projects/{other.pk}/processing/build", {"idempotency_key": "two"})

    assert "The processing queue is full; retry later." in response.content.decode()


def test_a_plain_form_post_redirects_back_with_a_message(browser, project):
    response = browser.post(f"/projects/{project.pk}/processing/build", {"idempotency_key": "plain"}, follow=True)

    assert response.redirect_chain[-1][0] == f"/projects/{project.pk}/"
    assert "Queued." in response.content.decode()


def test_a_viewer_gets_no_build_button_and_cannot_submit(project, owner):
    viewer = UserFactory()
    member_set(actor_id=owner.pk, project_id=project.pk, username=viewer.username, role="viewer")
    client = Client()
    client.force_login(viewer)

    assert "Build PDF" not in client.get(f"/projects/{project.pk}/processing/actions").content.decode()
    response = client.post(
        f"/projects/{project.pk}/processing/build", {"idempotency_key": "v"}, headers={"HX-Request": "true"}
    )
    assert 'role="alert"' in response.content.decode()
    assert not ProcessingJob.objects.filter(project_id=project.pk).exists()


def test_someone_elses_project_is_404(htmx):
    theirs = ProjectFactory(owner=UserFactory(), starter=True)

    assert htmx("get", f"/projects/{theirs.pk}/processing/actions").status_code == 404
    assert htmx("post", f"/projects/{theirs.pk}/processing/build", {"idempotency_key": "x"}).status_code == 404


def test_no_export_menu_without_the_capability(htmx, owner):
    typst = ProjectFactory(owner=owner, project_type="typst", starter=True)

    page = _actions(htmx, typst)

    assert "Export as PPTX" not in page and "Build PDF" not in page


@pytest.fixture
def extended(settings, configure_deployment):
    settings.QUIRE_DISTRIBUTION = "extended"
    configure_deployment(operations=[LATEX, "typst.export.pptx/v1", "pptx.import.typst/v1"])


def test_the_export_menu_offers_pptx_when_the_capability_is_present(htmx, owner, project, extended):
    typst = ProjectFactory(owner=owner, project_type="typst", starter=True)

    page = _actions(htmx, typst)
    assert "Export as PPTX" in page and "workers offline — the job will wait" in page
    assert "Export as PPTX" not in _actions(htmx, project)  # a LaTeX project has nothing to export to PPTX

    response = htmx("post", f"/projects/{typst.pk}/processing/export/pptx", {"idempotency_key": "x"})
    assert "quire:job-submitted" in response["HX-Trigger"]
    assert ProcessingJob.objects.get(project_id=typst.pk).operation == "typst.export.pptx/v1"


def test_the_import_form_lists_the_distributions_profiles(htmx, extended):
    page = htmx("get", "/imports/pptx").content.decode()

    assert "Import PPTX" in page and 'value="editable"' in page and 'value="faithful"' in page
    assert "Faithful — each slide" in page and KEY.search(page).group(1) == "import-key"


def test_no_import_form_without_the_capability(htmx):
    assert "Import PPTX" not in htmx("get", "/imports/pptx").content.decode()


def test_importing_a_pptx_creates_a_requester_owned_job(htmx, owner, extended):
    deck = SimpleUploadedFile("deck.pptx", package(), content_type=PPTX)

    response = htmx("post", "/imports/pptx/submit", {"file": deck, "input_profile": "faithful", "idempotency_key": "i"})

    job = ProcessingJob.objects.get(operation="pptx.import.typst/v1")
    assert (job.requester_id, job.project_id, job.input_profile) == (owner.pk, None, "faithful")
    assert job.input_filename == "deck.pptx" and "quire:job-submitted" in response["HX-Trigger"]
    assert f'hx-get="/tasks/{job.pk}"' in response.content.decode()  # the page follows the import to its end


def test_a_finished_imports_row_leads_with_opening_the_new_project(htmx, owner):

    imported = ProjectFactory(owner=owner, starter=True)
    job = JobFactory(
        succeeded=True,
        operation="pptx.import.typst/v1",
        requester=owner,
        input_filename="deck.pptx",
        result_project_id=imported.pk,
    )

    row = htmx("get", f"/tasks/{job.pk}").content.decode()

    actions = row[row.index('class="job-actions"') :]
    assert actions.index("Open the new project") < actions.index("</div>")
    assert f"/projects/{imported.pk}/" in actions.split("Open the new project")[0]


def test_importing_without_a_file_says_so(htmx, extended):
    response = htmx("post", "/imports/pptx/submit", {"idempotency_key": "i"})

    assert "Choose a .pptx file" in response.content.decode()
