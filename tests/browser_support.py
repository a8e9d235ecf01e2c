"""What browser tests share: Debian's Chromium through Playwright (never `playwright install`), users who sign in
through the form, and screenshots under ``test-results/screenshots/``. Its fixtures (``chromium``, ``author``)
are a plugin of every test (tests/conftest.py)."""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "test-results" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "browser-password"


@contextmanager
def chromium_launched() -> Iterator[Browser]:
    """Debian's Chromium for a module of browser tests. Playwright's sync API keeps an event loop running in
    this thread; the ORM calls the tests make are still plain synchronous code, so Django's guard against
    async contexts is lifted meanwhile."""
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def chromium():
    with chromium_launched() as browser:
        yield browser


@pytest.fixture
def author(transactional_db):
    """A user who signs in through the form (a module may name its author otherwise)."""
    return user_who_signs_in()


def user_who_signs_in(**fields):
    """A user whose password the server checks with its own (production) hasher."""
    user = UserFactory(**fields)
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    user.save(update_fields=["password"])
    return user


def sign_in(page: Page, user) -> None:
    page.goto("/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name=re.compile("sign in|log in", re.I)).click()
    expect(page.get_by_role("heading", name="Projects")).to_be_visible()


def page_in(chromium: Browser, url: str, *, width: int = 1280, height: int = 860) -> Page:
    """A page of a fresh browser context on the site at ``url``, waiting up to 20 s for what a test expects."""
    context = chromium.new_context(base_url=url, viewport={"width": width, "height": height})
    context.set_default_timeout(20_000)
    return context.new_page()


def editor_opened(page: Page, user, project, path: str = "main.tex", *, saved: bool = False) -> None:
    """Sign ``user`` in and open ``path`` of ``project`` in the editor, ready to type (and, with ``saved``,
    in step with the server)."""
    sign_in(page, user)
    page.goto(f"/projects/{project.pk}/?file={path}")
    expect(page.locator(".live-editor-ready")).to_be_visible()
    if saved:
        expect(page.locator("[data-sync-status]")).to_have_text("All changes saved")


def screenshot(page: Page, name: str, *, full_page: bool = False) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=full_page)


def database_quiet(*, timeout: float = 10.0) -> None:
    """Wait until no other session of this test database is at work (a closed page's server still finishes
    its last requests and socket clean-up for a moment): a transactional test's flush, which follows, can
    otherwise deadlock with that work."""
    import time

    from django.db import connection

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')"
            )
            if cursor.fetchone()[0] == 0:
                return
        time.sleep(0.05)


def pane_shows(page: Page, words: str, *, page_number: int = 1, timeout_ms: int = 90_000) -> None:
    """Wait until the PDF pane's document has ``words`` on the given page (its text as PDF.js reads it).

    Polled here with ``evaluate``, which waits for the page's promise (a predicate returning one would count as
    true at once)."""
    reading = """async ([words, number]) => {
        const pane = window.quirePdf;
        if (!pane || !pane.view.document || pane.view.elements.length < number) return false;
        return (await pane.view.pageText(number)).includes(words);
    }"""
    for _ in range(timeout_ms // 100):
        if page.evaluate(reading, [words, page_number]):
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"the PDF pane never showed {words!r} on page {page_number}")
