"""One real Quire for the shared-project browser tests: two server processes (so pages and events cross
processes), a worker agent running TeX Live, Debian's Chromium, and users who sign in through the form."""

import time

import pytest
import requests
from playwright.sync_api import Page, expect

from access.services import member_set
from collaboration.models import LiveConnection
from tests.browser_support import chromium_launched, sign_in, user_who_signs_in
from tests.factories import ProjectFactory, bearer_token_for
from tests.live_site import site_fixture
from workspace import services as workspace_services

LATEX = "latex.compile.pdf/v1"
PAPER = "\\documentclass{article}\n\\begin{document}\n\\input{sections/intro}\nClosing words.\n\\end{document}\n"
INTRO = "\\section{Introduction}\nIntroductory words.\n"


# Access is re-read once a minute: what a page shows at once comes from the change's own announcement.
quire = site_fixture(
    "quire",
    "shared-project",
    scope="package",
    needs=("channel_layer_of_tests",),
    operations=[LATEX],
    limits={"lease_seconds": 30},
    environment={"COLLAB_PROJECTION_DELAY_SECONDS": "0.3", "COLLAB_ACCESS_CHECK_SECONDS": "60"},
    workers=2,
    agent_slots=2,
)


@pytest.fixture(autouse=True)
def _servers_settled(transactional_db):
    """Pages are closed after a test; the servers go on forgetting their sockets for a moment, which the
    transactional test's flush must not meet."""
    yield
    deadline = time.monotonic() + 10
    while LiveConnection.objects.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture(scope="package")
def chromium():
    """One Chromium for the package, as its server is (tests/browser_support.py's is one per module)."""
    with chromium_launched() as browser:
        yield browser


@pytest.fixture
def owner(transactional_db):
    return user_who_signs_in()


@pytest.fixture
def coauthor(transactional_db):
    return user_who_signs_in()


@pytest.fixture
def reader(transactional_db):
    return user_who_signs_in()


@pytest.fixture
def paper(owner, coauthor):
    """A two-file LaTeX paper of ``owner``'s with ``coauthor`` as an editor."""
    project = ProjectFactory(owner=owner, name="Shared paper")
    for path, text in (("main.tex", PAPER), ("sections/intro.tex", INTRO)):
        workspace_services.file_write(actor_id=owner.pk, project_id=project.pk, path=path, data=text.encode())
    member_set(actor_id=owner.pk, project_id=project.pk, username=coauthor.username, role="editor")
    return project


class Api:
    """The server's API as ``user``, through a real HTTP request (changes made by the server itself)."""

    def __init__(self, url: str, user):
        self.url, self.session = url, requests.Session()
        self.session.headers["Authorization"] = f"Bearer {bearer_token_for(user)}"

    def __getattr__(self, method):
        return lambda path, **options: self.session.request(method.upper(), self.url + path, timeout=30, **options)


@pytest.fixture
def api_for(quire):
    return lambda user: Api(quire.url, user)


@pytest.fixture
def signed_in(chromium, quire):
    """``signed_in(user)``: a page of a browser context of its own, signed in as ``user``."""
    contexts = []

    def open_page(user) -> Page:
        context = chromium.new_context(base_url=quire.url, viewport={"width": 1600, "height": 900})
        context.set_default_timeout(20_000)
        contexts.append(context)
        page = context.new_page()
        sign_in(page, user)
        return page

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def opened(signed_in):
    """``opened(user, project, path="main.tex")``: ``user``'s page of the project with ``path`` open and synced."""

    def open_file(user, project, path: str = "main.tex") -> Page:
        page = signed_in(user)
        page.goto(f"/projects/{project.pk}/?file={path}")
        expect(page.locator(".live-editor-ready")).to_be_visible()
        expect(page.locator("[data-sync-status]")).to_have_text("All changes saved")
        return page

    return open_file
