"""The task center and the contextual controls in a real browser: Debian's Chromium driven by Playwright,
against a real Quire (gunicorn + uvicorn) and a real worker agent running TeX Live in bubblewrap.

One server and one agent serve the whole module; each test signs in as its own user. Every test saves a
screenshot of its final state under ``test-results/screenshots/``.
"""

import re
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from processing.models import JobState, ProcessingJob, WorkerSession
from tests.factories import ProjectFactory
from tests.live_site import site_fixture
from tests.waiting import wait_until
from workspace import services as workspace_services

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LATEX = "latex.compile.pdf/v1"
ROOT = Path(__file__).resolve().parents[3]
SCREENSHOTS = ROOT / "test-results" / "screenshots"
BUILD_SECONDS = 90_000  # milliseconds Playwright waits for a real TeX build to finish
PASSWORD = "browser-password"
BROKEN = "\\documentclass{article}\n\\begin{document}\nHello\n\\undefinedcommand\n\\end{document}\n"


quire = site_fixture(
    "quire",
    "browser",
    operations=[LATEX],
    limits={"lease_seconds": 30, "session_ttl_seconds": 30},
    workers=2,
    agent_slots=2,
)


@pytest.fixture
def demo(author):
    return ProjectFactory(owner=author, name="Demo paper", starter=True)


def _new_page(chromium, quire, **options) -> Page:
    context = chromium.new_context(base_url=quire.url, **options)
    context.set_default_timeout(20_000)
    return context.new_page()


@pytest.fixture
def page(chromium, quire):
    page = _new_page(chromium, quire, viewport={"width": 1280, "height": 860})
    yield page
    page.context.close()


def _sign_in(page: Page, user) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name=re.compile("sign in|log in", re.I)).click()
    expect(page.get_by_role("heading", name="Projects")).to_be_visible()


def _open_project(page: Page, name: str = "Demo paper") -> None:
    page.get_by_role("link", name=re.compile(name)).first.click()
    expect(page.locator("#build-button")).to_be_visible()


def _workers_live() -> bool:
    return WorkerSession.objects.filter(
        state="active", expires_at__gt=timezone.now(), processors__operation=LATEX
    ).exists()


def _screenshot(page: Page, name: str, *, full_page: bool = False) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def _job_of(project) -> ProcessingJob:
    return wait_until(lambda: ProcessingJob.objects.filter(project_id=project.pk).first(), what="the job")


def _record_row_states(page: Page) -> None:
    """Remember every state a task row shows, and mark the document so a reload would be noticed."""
    page.evaluate(
        """() => {
          window.__sameDocument = true; window.__states = [];
          const note = () => document.querySelectorAll('#task-drawer [data-job-id]').forEach((row) => {
            const states = window.__states;
            if (states[states.length - 1] !== row.dataset.state) states.push(row.dataset.state);
          });
          new MutationObserver(note).observe(document.body, {subtree: true, childList: true, attributes: true});
        }"""
    )


def _open_tasks(page: Page):
    page.locator("#task-center-button").click()
    drawer = page.get_by_role("dialog", name="Tasks")
    expect(drawer).to_be_visible()
    return drawer


def test_build_pdf_is_followed_beside_the_button_and_in_the_drawer_to_a_downloadable_pdf(page, quire, author, demo):
    wait_until(_workers_live, what="a live LaTeX worker")
    _sign_in(page, author)
    _open_project(page)
    _screenshot(page, "project-page-build-controls")

    page.locator("#build-button").click()

    expect(page.get_by_role("dialog", name="Tasks")).to_be_hidden()  # the drawer opens only when asked
    expect(page.locator("#build-status")).to_have_attribute("data-state", re.compile("preparing|queued|running|fin"))
    drawer = _open_tasks(page)
    _record_row_states(page)
    row = drawer.locator(".job").first
    expect(row).to_contain_text("LaTeX build (PDF)")
    expect(row).to_contain_text("Demo paper")
    expect(row).to_have_attribute("data-state", "succeeded", timeout=BUILD_SECONDS)
    states = page.evaluate("window.__states")
    assert states[-1] == "succeeded", states
    expect(page.locator("#build-status")).to_have_attribute("data-state", "succeeded")
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    assert _job_of(demo).queued_at is not None

    with page.expect_download() as download:
        row.get_by_role("link", name=re.compile(r"Download main\.pdf")).click()
    assert Path(download.value.path()).read_bytes()[:5] == b"%PDF-"
    expect(page.locator("#task-badge .count-active")).to_have_count(0)
    _screenshot(page, "build-succeeded-drawer")


def test_a_failing_build_shows_file_and_line_and_the_badge_counts_it_until_opened(page, quire, author, demo):
    workspace_services.file_write(actor_id=author.pk, project_id=demo.pk, path="main.tex", data=BROKEN.encode())
    wait_until(_workers_live, what="a live LaTeX worker")
    _sign_in(page, author)
    _open_project(page)

    page.locator("#build-button").click()  # the drawer stays closed: this browser has not seen the failure
    wait_until(lambda: _job_of(demo).state == JobState.FAILED, timeout=90, what="the build to fail")
    expect(page.locator("#build-status")).to_contain_text("LaTeX stopped with an error.")

    page.goto("/")  # any page: the badge is in the header
    failed = page.locator("#task-badge .count-failed")
    expect(failed).to_have_text(re.compile(r"^\s*1"))

    page.locator("#task-center-button").focus()
    page.keyboard.press("Enter")
    drawer = page.get_by_role("dialog", name="Tasks")
    expect(drawer).to_be_visible()
    expect(page.locator("#task-drawer-title")).to_be_focused()
    row = drawer.locator(".job").first
    expect(row).to_have_attribute("data-state", "failed")
    page.keyboard.press("ArrowDown")  # from the title to the first task
    expect(row).to_be_focused()
    expect(row).to_contain_text("main.tex:4")
    row.locator("summary", has_text="Diagnostics").click()
    expect(row.locator(".diagnostic-error .location").first).to_have_text("main.tex:4")
    expect(row.locator("pre.log")).to_contain_text("Undefined control sequence")
    _screenshot(page, "build-failed-diagnostics")

    page.keyboard.press("Escape")
    expect(page.locator("#task-center-button")).to_be_focused()
    expect(failed).to_have_count(0)  # opened: the indicator clears; the job and its history stay
    page.reload()
    expect(page.locator("#task-badge")).to_have_attribute("data-failed", "0")


def test_a_double_click_on_build_pdf_is_one_job(page, quire, author, demo):
    wait_until(_workers_live, what="a live LaTeX worker")
    _sign_in(page, author)
    _open_project(page)
    form = page.evaluate("() => new FormData(document.querySelector('.build-form')).get('idempotency_key')")

    page.locator("#build-button").dblclick()
    expect(_open_tasks(page).locator(".job")).to_have_count(1)
    # The same form sent again (a resubmission with its key) is still the same job.
    resent = page.evaluate(
        """async (key) => {
          const form = document.querySelector('.build-form');
          const data = new FormData(form); data.set('idempotency_key', key);
          const answer = await fetch(form.action, {method: 'POST', body: data, headers: {'HX-Request': 'true'}});
          return answer.text();
        }""",
        form,
    )
    assert "Already submitted" in resent
    assert ProcessingJob.objects.filter(project_id=demo.pk).count() == 1
    expect(page.locator("#task-drawer .job").first).to_have_attribute("data-state", "succeeded", timeout=BUILD_SECONDS)
    assert ProcessingJob.objects.filter(project_id=demo.pk).count() == 1
    _screenshot(page, "double-click-one-job")


def test_a_small_screen_opens_the_full_page_task_center(chromium, quire, author, demo):
    wait_until(_workers_live, what="a live LaTeX worker")
    page = _new_page(chromium, quire, viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True)
    try:
        _sign_in(page, author)
        _open_project(page)
        page.locator("#build-button").click()
        expect(page.locator("#build-status")).not_to_have_attribute("data-state", "none")
        expect(page.get_by_role("dialog", name="Tasks")).to_be_hidden()  # no drawer on a phone

        page.locator("#task-center-button").click()
        expect(page).to_have_url(re.compile(r"/tasks$"))
        row = page.locator(".tasks-page .job").first
        expect(row).to_have_attribute("data-state", "succeeded", timeout=BUILD_SECONDS)
        expect(row.get_by_role("link", name=re.compile(r"Download main\.pdf"))).to_be_visible()
        assert page.evaluate("document.documentElement.scrollWidth") <= 360  # nothing wider than the screen
        _screenshot(page, "mobile-tasks-page", full_page=True)
    finally:
        page.context.close()


def test_without_workers_build_says_the_job_will_wait_and_it_can_be_cancelled(page, quire, author, demo):
    quire.stop_agent()  # the last test of the module: SIGTERM drains the agent and closes its session
    wait_until(lambda: not _workers_live(), what="the worker to be gone")
    _sign_in(page, author)
    _open_project(page)

    expect(page.locator("#build-waiting")).to_have_text(re.compile("Workers offline — the job will wait"))
    page.locator("#build-button").click()
    expect(page.locator("#build-notice")).to_contain_text("the job will wait")
    row = _open_tasks(page).locator(".job").first
    expect(row).to_have_attribute("data-state", "queued")
    expect(row).to_contain_text("Waiting for a worker")

    row.get_by_role("button", name="Cancel").click()
    expect(row).to_have_attribute("data-state", "cancelled")
    assert _job_of(demo).state == JobState.CANCELLED
    _screenshot(page, "waiting-then-cancelled")
