"""The author's loop in a real browser: type, build, read the PDF beside the source, jump to an error, fix,
rebuild — against a real Quire (two server processes) and a worker agent running TeX Live and Typst in
bubblewrap. The PDF pane's text is read from PDF.js's rendering of the fetched PDF.
"""

import re
import uuid

import pytest
from playwright.sync_api import Page, expect

from access.services import member_remove, member_set
from processing.models import JobState, ProcessingJob
from tests.browser_support import editor_opened, pane_shows, screenshot, sign_in, user_who_signs_in
from tests.factories import ProjectFactory
from tests.live_site import site_fixture
from workspace import services as workspace_services

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OPERATIONS = ["latex.compile.pdf/v1", "typst.compile.pdf/v1", "pdf.index.text/v1"]
BUILD_MS = 90_000
STATUS_POLL_MS = 5_000  # the build status's poll while no build is active (processing/ui/build_status)
THREE_PAGES = (
    "\\documentclass{article}\n\\begin{document}\n"
    + "".join(f"\\section{{Part {n}}}\nWords of part {n}.\n\\newpage\n" for n in (1, 2, 3))
    + "\\end{document}\n"
)
BROKEN = "\\documentclass{article}\n\\begin{document}\nHello\n\\undefinedcommand\n\\end{document}\n"


quire = site_fixture(
    "quire",
    "author-loop",
    operations=OPERATIONS,
    limits={"lease_seconds": 30},
    environment={"COLLAB_PROJECTION_DELAY_SECONDS": "0.3"},
    workers=2,
    agent_slots=2,
)


@pytest.fixture
def page(chromium, quire):
    context = chromium.new_context(base_url=quire.url, viewport={"width": 1600, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    yield page
    context.close()


def _open(page: Page, user, project, path: str) -> None:
    editor_opened(page, user, project, path)


def _type_at_end_of_line(page: Page, line: int, text: str) -> None:
    page.evaluate(
        """(line) => { const {view} = window.quireEditors[0];
                       view.dispatch({selection: {anchor: view.state.doc.line(line).to}}); view.focus(); }""",
        line,
    )
    page.keyboard.type(text)


def _build(page: Page) -> None:
    """Ctrl+Enter in the editor, once the build controls are on the page."""
    expect(page.locator("#build-button")).to_be_enabled()
    page.evaluate("() => window.quireEditors[0].view.focus()")
    page.keyboard.press("Control+Enter")


def _build_state(page: Page, state: str) -> None:
    expect(page.locator("#build-status")).to_have_attribute("data-state", state, timeout=BUILD_MS)


def _pane_shows(page: Page, words: str, *, page_number: int = 1) -> None:
    pane_shows(page, words, page_number=page_number, timeout_ms=BUILD_MS)


def test_a_build_shows_the_pdf_beside_the_source_and_a_newer_one_replaces_it_at_the_same_page(page, author):
    project = ProjectFactory(owner=author, name="Three pages")
    workspace_services.file_write(actor_id=author.pk, project_id=project.pk, path="main.tex", data=THREE_PAGES.encode())
    _open(page, author, project, "main.tex")
    page.evaluate("() => { window.__sameDocument = true; }")

    _type_at_end_of_line(page, 7, " Firstword")  # part 2's paragraph
    _build(page)
    _build_state(page, "succeeded")
    _pane_shows(page, "Firstword", page_number=2)
    page.get_by_role("button", name="Next page").click()
    expect(page.locator("[data-pdf-pane]")).to_have_attribute("data-page", "2")
    first_pdf = page.locator("[data-pdf-pane]").get_attribute("data-loaded-url")

    _type_at_end_of_line(page, 7, " Secondword")
    _build(page)
    expect(page.locator("[data-pdf-pane]")).not_to_have_attribute("data-loaded-url", first_pdf, timeout=BUILD_MS)
    _pane_shows(page, "Secondword", page_number=2)
    expect(page.locator("[data-pdf-pane]")).to_have_attribute("data-page", "2")  # kept where the author was
    assert page.evaluate("window.__sameDocument") is True  # no reload
    expect(page.get_by_role("dialog", name="Tasks")).to_be_hidden()
    screenshot(page, "author-loop-pdf-beside-source")


def test_a_content_failure_offers_rebuild_and_the_rebuild_of_the_fix_succeeds(page, author):
    project = ProjectFactory(owner=author, name="Broken")
    workspace_services.file_write(actor_id=author.pk, project_id=project.pk, path="main.tex", data=BROKEN.encode())
    _open(page, author, project, "main.tex")

    _build(page)
    _build_state(page, "failed")
    status = page.locator("#build-status")
    expect(status).to_contain_text("LaTeX stopped with an error.")
    expect(status).to_contain_text(re.compile(r"[1-9]\d* errors?"))
    page.locator("#task-center-button").click()
    row = page.get_by_role("dialog", name="Tasks").locator(".job").first
    expect(row.get_by_role("button", name="Rebuild")).to_be_visible()
    expect(row.get_by_role("button", name="Retry")).to_have_count(0)  # the same input would fail the same way
    page.keyboard.press("Escape")

    page.evaluate(
        """() => { const {view} = window.quireEditors[0]; const line = view.state.doc.line(4);
                   view.dispatch({changes: {from: line.from, to: line.to, insert: "Fixedword"}}); }"""
    )
    status.get_by_role("button", name="Rebuild").click()
    _build_state(page, "succeeded")
    _pane_shows(page, "Fixedword")
    jobs = ProcessingJob.objects.filter(project_id=project.pk).order_by("created_at")
    assert [job.state for job in jobs] == [JobState.FAILED, JobState.SUCCEEDED]
    assert jobs[1].retry_of_id is None  # a fresh capture, not a retry of the failed input
    screenshot(page, "author-loop-rebuild")


def test_a_typst_project_builds_to_pdf_the_same_way(page, author):
    project = ProjectFactory(owner=author, name="Typst paper", project_type="typst", starter=True)
    word = f"Typstword{uuid.uuid4().hex[:6]}"
    _open(page, author, project, "main.typ")

    _type_at_end_of_line(page, page.evaluate("window.quireEditors[0].view.state.doc.lines"), f"\n{word}\n")
    expect(page.locator("[data-sync-status]")).to_have_text("All changes saved")
    page.locator("#build-button").click()
    _build_state(page, "succeeded")
    _pane_shows(page, word)
    expect(page.locator("#build-status .word-count")).to_have_text(re.compile(r"^\d+ words$"))
    job = ProcessingJob.objects.filter(project_id=project.pk).get()
    assert job.operation == "typst.compile.pdf/v1"
    screenshot(page, "author-loop-typst")


def test_a_removed_members_pdf_pane_stops_loading(chromium, quire, author):
    member = user_who_signs_in()
    project = ProjectFactory(owner=author, name="Shared", starter=True)
    member_set(actor_id=author.pk, project_id=project.pk, username=member.username, role="editor")
    context = chromium.new_context(base_url=quire.url, viewport={"width": 1600, "height": 900})
    page = context.new_page()
    try:
        _open(page, member, project, "main.tex")
        _build(page)
        _build_state(page, "succeeded")
        _pane_shows(page, "Quire")
        job = ProcessingJob.objects.get(project_id=project.pk)
        pdf_url = page.locator("[data-pdf-pane]").get_attribute("data-loaded-url")

        member_remove(actor_id=author.pk, project_id=project.pk, username=member.username)

        # The next status poll (every 5 s once no build is active) finds no build the member may see: the pane
        # lets the PDF go and says why. Waited for longer than that poll, which a 5-s expectation raced.
        expect(page.locator("[data-pdf-message]")).to_have_text(
            "This PDF is no longer available to you.", timeout=STATUS_POLL_MS * 3
        )
        expect(page.locator("[data-pdf-pages] canvas")).to_have_count(0)
        assert page.evaluate("async (url) => (await fetch(url)).status", pdf_url) == 404
        page.reload()
        expect(page.get_by_role("heading", name="Not found")).to_be_visible()
        assert ProcessingJob.objects.get(pk=job.pk).state == JobState.SUCCEEDED  # the author's record stays
    finally:
        context.close()


def test_on_a_phone_source_and_pdf_are_two_tabs(chromium, quire, author):
    project = ProjectFactory(owner=author, name="Pocket", starter=True)
    context = chromium.new_context(base_url=quire.url, viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    try:
        _open(page, author, project, "main.tex")
        expect(page.locator("[data-pdf-pane]")).to_be_hidden()
        page.locator("#build-button").click()
        _build_state(page, "succeeded")
        page.get_by_role("tab", name="PDF").click()
        expect(page.locator("[data-pdf-pane]")).to_be_visible()
        expect(page.locator(".source-pane")).to_be_hidden()
        _pane_shows(page, "Quire")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        screenshot(page, "author-loop-phone-pdf")
    finally:
        context.close()


def test_the_library_reads_documents_in_the_pane_opens_search_hits_at_their_page_and_fits_a_phone(
    chromium, quire, author
):
    from tests.library.pdfs import text_pdf

    project = ProjectFactory(owner=author, name="Reading")
    context = chromium.new_context(base_url=quire.url, viewport={"width": 390, "height": 844}, is_mobile=True)
    page = context.new_page()
    pdf = text_pdf(["first page words", "the kestrel hovers", "last page"])
    try:
        sign_in(page, author)
        page.goto(f"/projects/{project.pk}/?tab=library")
        page.get_by_label("PDF to add").set_input_files(
            files=[{"name": "birds.pdf", "mimeType": "application/pdf", "buffer": pdf}]
        )
        page.get_by_role("button", name="Add to library").click()
        document = page.locator(".library-document").first
        expect(document.locator("[data-status]").first).to_have_attribute("data-status", "searchable", timeout=BUILD_MS)
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        screenshot(page, "library-phone", full_page=True)

        page.get_by_label("Search this project's PDFs").fill("kestrel")
        page.get_by_role("button", name="Search").click()
        page.locator(".library-hit").first.click()
        _pane_shows(page, "kestrel", page_number=2)
        expect(page.locator("[data-pdf-pane]")).to_have_attribute("data-page", "2")
        expect(page.locator("[data-pdf-pane]")).to_have_attribute("data-kind", "library")
    finally:
        context.close()


def test_the_log_panel_lists_every_error_and_a_click_opens_its_file_at_its_line(page, author):
    project = ProjectFactory(owner=author, name="Two errors")
    main = (
        "\\documentclass{article}\n\\begin{document}\nIntro.\n\\undefinedone\n\\input{chapters/one}\n"
        "\\hbox to 2cm{An overfull box that will not fit at all}\n\\end{document}\n"
    )
    one = "Chapter text.\n\n\\undefinedtwo\n"
    for path, text in (("main.tex", main), ("chapters/one.tex", one)):
        workspace_services.file_write(actor_id=author.pk, project_id=project.pk, path=path, data=text.encode())
    _open(page, author, project, "main.tex")

    _build(page)
    _build_state(page, "failed")
    errors = page.locator(".log-group-error .log-entry")
    expect(errors).to_have_count(2)
    expect(errors.nth(0)).to_contain_text("main.tex:4")
    expect(errors.nth(1)).to_contain_text("chapters/one.tex:3")
    page.locator(".log-group-box summary").click()
    expect(page.locator(".log-group-box .log-entry").first).to_contain_text(re.compile(r"main\.tex:6 .*Overfull"))
    screenshot(page, "author-loop-log-panel")

    errors.nth(1).click()  # another file: the page opens it there
    expect(page).to_have_url(re.compile(r"file=chapters%2Fone\.tex.*line=3|line=3.*file=chapters%2Fone\.tex"))
    expect(page.locator(".live-editor-ready")).to_be_visible()
    page.wait_for_function(
        "() => { const {view} = window.quireEditors[0]; "
        "return view.state.doc.lineAt(view.state.selection.main.head).number === 3; }"
    )
    page.locator(".log-group-error .log-entry").nth(0).click()  # back to main.tex, line 4
    expect(page.locator(".live-editor-ready")).to_be_visible()
    page.wait_for_function(
        "() => { const {view} = window.quireEditors[0]; "
        "return view.state.doc.lineAt(view.state.selection.main.head).number === 4; }"
    )
    page.locator(".log-group-error .log-entry").nth(0).click()  # the same file: no navigation, the caret moves
    page.locator("[data-raw-log] summary").click()
    expect(page.locator("[data-raw-log] mark.first-error")).to_contain_text("main.tex:4")


def test_synctex_shows_the_cursors_line_in_the_pdf_and_a_ctrl_click_there_opens_its_line(page, author):
    project = ProjectFactory(owner=author, name="Synced")
    main = (
        "\\documentclass{article}\n\\begin{document}\nFirst paragraph of main.\n\n"
        "\\input{chapters/one}\n\\end{document}\n"
    )
    one = "% chapter one\nA paragraph in the chapter with enough words to be seen.\n\nAnother paragraph here.\n"
    for path, text in (("main.tex", main), ("chapters/one.tex", one)):
        workspace_services.file_write(actor_id=author.pk, project_id=project.pk, path=path, data=text.encode())
    _open(page, author, project, "chapters/one.tex")
    _build(page)
    _build_state(page, "succeeded")
    _pane_shows(page, "Another paragraph")
    expect(page.locator("#build-status")).to_have_attribute("data-synctex-url", re.compile(r"/output/synctex$"))

    page.evaluate("""() => { const {view} = window.quireEditors[0];
                             view.dispatch({selection: {anchor: view.state.doc.line(4).from}}); view.focus(); }""")
    page.get_by_role("button", name="Show in PDF").click()
    highlight = page.locator(".pdf-highlight")
    expect(highlight).to_have_count(1)
    box = highlight.bounding_box()

    page.evaluate("""() => { const {view} = window.quireEditors[0];
                             view.dispatch({selection: {anchor: 0}}); }""")  # elsewhere, so the click must move it
    page.keyboard.down("Control")
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.keyboard.up("Control")
    page.wait_for_function(
        "() => { const {view} = window.quireEditors[0]; "
        "return view.state.doc.lineAt(view.state.selection.main.head).number === 4; }"
    )
    assert page.url.endswith("file=chapters/one.tex") or "chapters%2Fone.tex" in page.url
    screenshot(page, "author-loop-synctex")


def _open_build_menu(page: Page) -> None:
    menu = page.locator("details.build-menu")
    if menu.get_attribute("open") is None:
        menu.locator("summary").click()


def test_build_when_i_stop_typing_builds_after_a_pause_and_stays_on_after_a_reload(page, author):
    project = ProjectFactory(owner=author, name="Auto-build")
    workspace_services.file_write(actor_id=author.pk, project_id=project.pk, path="main.tex", data=THREE_PAGES.encode())
    _open(page, author, project, "main.tex")
    _open_build_menu(page)
    page.locator("#auto-build").check()

    page.reload()
    expect(page.locator(".live-editor-ready")).to_be_visible()
    _open_build_menu(page)
    expect(page.locator("#auto-build")).to_be_checked()
    page.evaluate(
        """() => {
             document.addEventListener("keydown", () => { window.__lastKey = performance.now(); }, true);
             document.body.addEventListener("htmx:configRequest", (event) => {
               if (event.detail.elt.closest("form.build-form")) window.__buildSent = performance.now();
             });
           }"""
    )
    _type_at_end_of_line(page, 7, " Pausedword")  # and no Ctrl+Enter

    _build_state(page, "succeeded")
    _pane_shows(page, "Pausedword", page_number=2)
    assert page.evaluate("window.__buildSent - window.__lastKey") >= 1500, "built before the pause was over"
    jobs = ProcessingJob.objects.filter(project_id=project.pk)
    assert [job.options for job in jobs] == [{"supersede": True}]
    expect(page.locator("#build-status .build-took")).to_contain_text(re.compile(r"in \d+\.\d s · from scratch"))


def test_a_rebuild_starts_warm_says_so_and_recompile_from_scratch_does_not(page, author):
    project = ProjectFactory(owner=author, name="Warm")
    workspace_services.file_write(actor_id=author.pk, project_id=project.pk, path="main.tex", data=THREE_PAGES.encode())
    _open(page, author, project, "main.tex")
    _build(page)
    _build_state(page, "succeeded")
    first = page.locator("#build-status").get_attribute("data-job-id")

    _type_at_end_of_line(page, 7, " Warmword")
    _build(page)
    expect(page.locator("#build-status")).not_to_have_attribute("data-job-id", first, timeout=BUILD_MS)
    expect(page.locator("#build-status .build-took")).to_contain_text("warm start", timeout=BUILD_MS)
    _pane_shows(page, "Warmword", page_number=2)
    warm = page.locator("#build-status").get_attribute("data-job-id")

    _open_build_menu(page)
    page.get_by_role("button", name="Recompile from scratch").click()
    expect(page.locator("#build-status")).not_to_have_attribute("data-job-id", warm, timeout=BUILD_MS)
    expect(page.locator("#build-status .build-took")).to_contain_text("from scratch", timeout=BUILD_MS)
    clean = ProcessingJob.objects.get(pk=page.locator("#build-status").get_attribute("data-job-id"))
    assert (clean.options, clean.cache_hit, clean.build_start) == ({"clean": True}, False, "clean")
    screenshot(page, "author-loop-warm-and-clean")


def test_build_when_i_stop_typing_holds_while_offline_and_builds_once_back(page, author):
    project = ProjectFactory(owner=author, name="Offline auto-build")
    workspace_services.file_write(actor_id=author.pk, project_id=project.pk, path="main.tex", data=THREE_PAGES.encode())
    _open(page, author, project, "main.tex")
    _open_build_menu(page)
    page.locator("#auto-build").check()

    page.context.set_offline(True)
    page.wait_for_function("() => !navigator.onLine")
    _type_at_end_of_line(page, 7, " Offlineword")
    expect(page.locator("html")).to_have_attribute("data-auto-build", "held-offline")
    assert not ProcessingJob.objects.filter(project_id=project.pk).exists()

    page.context.set_offline(False)
    _build_state(page, "succeeded")
    _pane_shows(page, "Offlineword", page_number=2)
    assert ProcessingJob.objects.filter(project_id=project.pk).count() == 1
