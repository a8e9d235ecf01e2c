"""Every HTML page runs under a Content-Security-Policy that allows scripts, styles, workers and fonts from Quire
itself only (no inline script or style, no eval), and nothing on any page breaks it: each page is loaded in
Chromium, used a little, and any violation the browser reports fails the test."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import Page, expect

from processing.submission.submit import job_submit
from tests.browser_support import database_quiet, sign_in, user_who_signs_in
from tests.factories import ProjectFactory
from tests.live_site import site_fixture
from tests.processing.lifecycle import build_to_success, pdf_bytes

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LATEX = "latex.compile.pdf/v1"
# Recorded by the page itself, from the browser's own securitypolicyviolation events.
RECORD_VIOLATIONS = """
window.quireCspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.quireCspViolations.push(`${event.violatedDirective} blocked ${event.blockedURI || "inline"} ` +
    `at ${event.sourceFile}:${event.lineNumber}`);
});
"""


quire = site_fixture("quire", "csp", operations=[LATEX])


@pytest.fixture
def page(quire, chromium):
    context = chromium.new_context(base_url=quire.url, viewport={"width": 1366, "height": 900})
    context.set_default_timeout(20_000)
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    console = []
    page.on("console", lambda message: console.append(f"{message.text} at {message.location.get('url')}"))
    page.console_messages_seen = console
    yield page
    context.close()
    database_quiet()


def violations(page: Page) -> list[str]:
    recorded = page.evaluate("window.quireCspViolations || []")
    reported = [text for text in page.console_messages_seen if "Content Security Policy" in text]
    return recorded + reported


def visited(page: Page, path: str) -> list[str]:
    page.console_messages_seen.clear()
    response = page.goto(path)
    assert response is not None and response.ok, (path, response and response.status)
    policy = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "'unsafe-eval'" not in policy
    page.wait_for_load_state("networkidle")
    return violations(page)


@pytest.fixture
def operator(transactional_db):
    user = user_who_signs_in(is_staff=True, is_superuser=True)
    user.groups.add(Group.objects.get_or_create(name="Operators")[0])
    return user


def test_no_page_breaks_the_content_security_policy(page, operator):
    project = ProjectFactory(owner=operator, starter=True)
    job = job_submit(actor_id=operator.pk, operation_name=LATEX, idempotency_key="csp", project_id=project.pk)
    build_to_success(job.job_id, pdf=pdf_bytes(pages=2), words=12)
    found = {"/login/": visited(page, "/login/")}
    sign_in(page, operator)

    pages = [
        "/",
        "/projects/new",
        f"/projects/{project.pk}/",
        f"/projects/{project.pk}/?tab=settings",
        f"/projects/{project.pk}/?tab=members",
        "/tasks",
        "/account/tokens",
        "/admin/",
        "/admin/processing/processingjob/",
        f"/admin/processing/processingjob/{job.job_id}/change/",
        "/admin/processing/processingjob/overview/",
    ]
    found |= {path: visited(page, path) for path in pages}
    missing = page.goto("/projects/00000000-0000-4000-8000-000000000000/")
    assert missing.status == 404 and "script-src 'self'" in missing.headers["content-security-policy"]

    page.console_messages_seen.clear()
    page.goto(f"/projects/{project.pk}/")
    expect(page.locator(".cm-content")).to_be_visible()
    expect(page.locator("[data-pdf-pages] canvas").first).to_be_visible()
    page.locator(".cm-content").click()
    page.keyboard.type("% typed under the policy\n")
    page.locator("#task-center-button").click()
    expect(page.get_by_role("dialog", name="Tasks")).to_be_visible()
    page.wait_for_load_state("networkidle")
    found["the project page, used"] = violations(page)

    broken = {where: seen for where, seen in found.items() if seen}
    assert not broken, "\n".join(f"{where}: {line}" for where, seen in broken.items() for line in seen)
