"""Live editing in a real browser: Debian's Chromium through Playwright, against real Quire servers (gunicorn +
uvicorn, two worker processes) and a real worker agent running TeX Live in bubblewrap.

Keystrokes are real key events; the editors' text is read from CodeMirror's state, Workspace's from the
database. Each test leaves a screenshot of its end state under ``test-results/screenshots/``.
"""

import io
import itertools
import re
import uuid

import pytest
from playwright.sync_api import Page, expect
from pypdf import PdfReader

from access.services import member_set
from collaboration.models import AcceptedUpdate
from collaboration.services import text_edit
from processing.models import JobState, ProcessingJob
from tests.browser_support import editor_opened, page_in, screenshot, user_who_signs_in
from tests.factories import ProjectFactory
from tests.live_server import free_port, quire_server
from tests.live_site import site_fixture
from tests.waiting import wait_until
from workspace import selectors
from workspace.models import ProjectFile

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

LATEX = "latex.compile.pdf/v1"
SERVER_ENV = {"COLLAB_PROJECTION_DELAY_SECONDS": "0.3"}


quire = site_fixture(
    "quire",
    "live-editor",
    operations=[LATEX],
    limits={"lease_seconds": 30, "session_ttl_seconds": 30},
    environment=SERVER_ENV,
    workers=2,
    agent_slots=2,
)


@pytest.fixture
def coauthor(transactional_db):
    return user_who_signs_in()


@pytest.fixture
def paper(author, coauthor):
    project = ProjectFactory(owner=author, name="Demo paper", starter=True)
    member_set(actor_id=author.pk, project_id=project.pk, username=coauthor.username, role="editor")
    return project


def _page(chromium, url: str) -> Page:
    return page_in(chromium, url)


def _open(page: Page, user, project, path: str = "main.tex") -> None:
    editor_opened(page, user, project, path, saved=True)


def _text(page: Page) -> str:
    return page.evaluate("window.quireEditors[0].view.state.doc.toString()")


def _cursor_to_end_of_line(page: Page, line: int) -> None:
    """Put the caret at the end of a line, as a click there would, and focus the editor."""
    page.evaluate(
        """(line) => { const {view} = window.quireEditors[0];
                       view.dispatch({selection: {anchor: view.state.doc.line(line).to}}); view.focus(); }""",
        line,
    )


def _type_together(*typists: tuple[Page, str]) -> None:
    """Each page types its text, one key each in turn, so that the keystrokes cross on the way."""
    for keys in itertools.zip_longest(*(text for _, text in typists), fillvalue=""):
        for (page, _), key in zip(typists, keys, strict=True):
            if key:
                page.keyboard.type(key)


def _workspace_text(project, path: str = "main.tex") -> str:
    return selectors.text_of(selectors.file_current(project_id=project.pk, path=path))


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def _status(page: Page):
    return page.locator("[data-sync-status]")


def test_two_authors_typing_at_once_on_other_lines_and_then_the_same_line_lose_nothing(
    chromium, quire, paper, author, coauthor
):
    alice, bob = _page(chromium, quire.url), _page(chromium, quire.url)
    try:
        _open(alice, author, paper)
        _open(bob, coauthor, paper)
        _cursor_to_end_of_line(alice, 5)
        _cursor_to_end_of_line(bob, 11)
        _type_together((alice, " alice-was-here"), (bob, " bob-was-here"))
        _cursor_to_end_of_line(alice, 8)
        _cursor_to_end_of_line(bob, 8)
        _type_together((alice, " [ALICE]"), (bob, " [BOB]"))

        for page in (alice, bob):
            expect(_status(page)).to_have_text("All changes saved")
        wait_until(lambda: _text(alice) == _text(bob), timeout=10, what="both editors to converge")
        merged = _text(alice)
        lines = merged.split("\n")
        assert lines[4].endswith(" alice-was-here") and lines[10].endswith(" bob-was-here"), merged
        assert "[ALICE]" in lines[7] and "[BOB]" in lines[7], lines[7]
        wait_until(lambda: _workspace_text(paper) == merged, timeout=10, what="Workspace to project the same text")
        screenshot(bob, "live-editing-two-authors")
    finally:
        alice.context.close()
        bob.context.close()


def test_each_author_sees_the_others_cursor_and_name(chromium, quire, paper, author, coauthor):
    alice, bob = _page(chromium, quire.url), _page(chromium, quire.url)
    try:
        _open(alice, author, paper)
        _open(bob, coauthor, paper)
        _cursor_to_end_of_line(alice, 3)
        alice.keyboard.type("%")

        expect(bob.locator("[data-presence]")).to_contain_text(author.username)
        expect(bob.locator(".cm-ySelectionInfo")).to_have_text(author.username)
        expect(alice.locator("[data-presence]")).to_contain_text(coauthor.username)
        screenshot(bob, "live-editing-presence")
    finally:
        alice.context.close()
        bob.context.close()


def test_build_pressed_right_after_typing_builds_what_was_typed(chromium, quire, paper, author, api_client_for):
    page = _page(chromium, quire.url)
    word = f"Quokka{uuid.uuid4().hex[:8]}"
    try:
        _open(page, author, paper)
        expect(page.locator("#build-button")).to_be_visible()
        _cursor_to_end_of_line(page, 11)  # the body's first paragraph
        page.keyboard.type(f" {word}")
        page.keyboard.press("Control+Enter")  # at once: the build waits for the keystrokes to be stored

        job = wait_until(lambda: ProcessingJob.objects.filter(project_id=paper.pk).first(), what="the build job")
        wait_until(
            lambda: ProcessingJob.objects.get(pk=job.pk).state == JobState.SUCCEEDED, timeout=90, what="the build"
        )
        artifact = job.artifacts.get(role="pdf")
        download = api_client_for(author).get(f"/v1/processing/jobs/{job.pk}/artifacts/{artifact.pk}")
        pdf = PdfReader(io.BytesIO(_body(download)))
        assert word in "".join(pdf_page.extract_text() for pdf_page in pdf.pages)
        version = ProjectFile.objects.get(project=paper, path="main.tex").version
        assert ProcessingJob.objects.get(pk=job.pk).captured["documents"] == [["main.tex", version]]
        page.locator("#task-center-button").click()
        expect(page.get_by_role("dialog", name="Tasks")).to_contain_text(re.compile(r"Captured main\.tex v\d+"))
        screenshot(page, "live-editing-build-after-typing")
    finally:
        page.context.close()


def test_a_viewer_can_read_along_but_not_type(chromium, quire, paper, author):
    viewer = user_who_signs_in()
    member_set(actor_id=author.pk, project_id=paper.pk, username=viewer.username, role="viewer")
    watcher, writer = _page(chromium, quire.url), _page(chromium, quire.url)
    try:
        _open(watcher, viewer, paper)
        _open(writer, author, paper)
        stored = AcceptedUpdate.objects.count()
        before = _text(watcher)
        _cursor_to_end_of_line(watcher, 2)
        watcher.keyboard.type("viewer typing")
        assert _text(watcher) == before  # the editor took no keystroke
        _cursor_to_end_of_line(writer, 2)
        writer.keyboard.type(" % from the author")
        expect(watcher.locator(".cm-content")).to_contain_text("% from the author")
        assert "viewer typing" not in _workspace_text(paper)
        assert AcceptedUpdate.objects.count() > stored  # the author's keystrokes, none of the viewer's
        screenshot(watcher, "live-editing-viewer")
    finally:
        watcher.context.close()
        writer.context.close()


def test_edits_made_while_the_server_is_down_arrive_when_it_is_back(chromium, author, paper, tmp_path):
    port = free_port()
    storage = tmp_path / "storage"
    storage.mkdir()
    page = None
    with quire_server(storage_dir=storage, extra_env=SERVER_ENV, workers=1, port=port) as url:
        page = _page(chromium, url)
        _open(page, author, paper)
        _cursor_to_end_of_line(page, 11)
        page.keyboard.type(" before-the-stop")
        expect(_status(page)).to_have_text("All changes saved")
        assert "before-the-stop" in _workspace_text(paper)  # acknowledged means stored
    try:
        expect(_status(page)).to_have_text(re.compile("^Offline"))
        page.keyboard.type(" typed-while-offline")
        expect(_status(page)).to_have_text(re.compile("^Offline"))
        page.evaluate("() => { window.__stillHere = true; }")
        with page.expect_event("dialog") as asked:
            page.close(run_before_unload=True)  # leaving with unsynced edits asks first
        assert asked.value.type == "beforeunload"
        asked.value.dismiss()  # the author stays: the page and its edits too
        assert page.evaluate("window.__stillHere") is True
        # Meanwhile an API client changes the first line; both changes must survive the reconnection.
        text = _workspace_text(paper)
        text_edit(actor_id=author.pk, project_id=paper.pk, path="main.tex", text="% while you were away\n" + text)

        with quire_server(storage_dir=storage, extra_env=SERVER_ENV, workers=1, port=port):
            expect(_status(page)).to_have_text("All changes saved", timeout=30_000)
            merged = _text(page)
            assert merged.startswith("% while you were away\n")
            assert "before-the-stop typed-while-offline" in merged
            wait_until(lambda: _workspace_text(paper) == merged, timeout=10, what="the offline edit to be stored")
            screenshot(page, "live-editing-after-reconnect")
    finally:
        page.context.close()
