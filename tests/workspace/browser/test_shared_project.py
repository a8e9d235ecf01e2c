"""A project every member shares, in real browsers (Debian's Chromium) against a real Quire (two server
processes) and a worker agent running TeX Live: one PDF for everyone, roles that change under an open page,
folders and files moved while someone types, zips in and out."""

import io
import re
import zipfile

import pytest
from playwright.sync_api import Page, expect

from access.services import member_set
from processing.models import JobState, ProcessingJob
from tests.browser_support import pane_shows, screenshot
from tests.workspace.browser.conftest import INTRO, PAPER
from workspace.models import Project, ProjectFile

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

BUILD_MS = 90_000


def built(page: Page) -> None:
    """Build from this page and wait for its own build to succeed."""
    expect(page.locator("#build-button")).to_be_enabled()
    page.locator("#build-button").click()
    expect(page.locator("#build-status")).to_have_attribute("data-state", "succeeded", timeout=BUILD_MS)


def typed_before_closing_words(page: Page, text: str) -> None:
    page.evaluate(
        "() => { const {view} = window.quireEditors[0]; const at = view.state.doc.toString().indexOf('Closing');"
        " view.dispatch({selection: {anchor: at}}); view.focus(); }"
    )
    page.keyboard.type(text)


def typed_at_end(page: Page, text: str) -> None:
    page.evaluate(
        "() => { const {view} = window.quireEditors[0]; view.dispatch({selection: {anchor: view.state.doc.length}});"
        " view.focus(); }"
    )
    page.keyboard.type(text)


def editor_text(page: Page) -> str:
    return page.evaluate("window.quireEditors[0].view.state.doc.toString()")


def test_a_coauthors_pane_shows_the_owners_new_build_without_a_reload(opened, owner, coauthor, paper):
    mine, theirs = opened(owner, paper), opened(coauthor, paper)
    theirs.evaluate("() => { window.__sameDocument = true; }")

    typed_before_closing_words(mine, "Freshword ")
    expect(mine.locator("[data-sync-status]")).to_have_text("All changes saved")
    built(mine)

    pane_shows(theirs, "Freshword", timeout_ms=BUILD_MS)
    expect(theirs.locator("#build-status [data-output]")).to_contain_text(f"PDF by {owner.username}")
    assert theirs.evaluate("window.__sameDocument") is True
    job = ProcessingJob.objects.get(project_id=paper.pk)
    assert theirs.locator("[data-pdf-pane]").get_attribute("data-loaded-url").endswith(f"build={job.pk}")
    screenshot(theirs, "shared-coauthor-sees-the-owners-build")


def test_a_viewer_reads_the_pdf_without_build_and_is_read_only_the_moment_they_are_demoted(
    opened, api_for, owner, coauthor, reader, paper
):
    member_set(actor_id=owner.pk, project_id=paper.pk, username=reader.username, role="viewer")
    built(opened(owner, paper))
    viewer, demoted = opened(reader, paper), opened(coauthor, paper)

    pane_shows(viewer, "Closing words.")
    expect(viewer.locator("#build-button")).to_have_count(0)
    expect(viewer.locator(".pdf-empty")).to_be_hidden()
    expect(viewer.get_by_text("Ctrl+Enter builds")).to_be_hidden()
    expect(viewer.locator("[data-read-only-badge]")).to_be_visible()
    expect(viewer.get_by_role("link", name="Download PDF")).to_be_visible()
    screenshot(viewer, "shared-viewer-reads-the-pdf")

    expect(demoted.locator("#build-button")).to_be_visible()
    demoted.evaluate("() => { window.__sameDocument = true; }")
    answer = api_for(owner).post(
        f"/v1/projects/{paper.pk}/members", json={"username": coauthor.username, "role": "viewer"}
    )
    assert answer.status_code == 200, answer.text

    expect(demoted.locator("[data-read-only-badge]")).to_be_visible(timeout=5_000)
    expect(demoted.locator("#build-button")).to_have_count(0, timeout=5_000)
    # The editor hears it on its own document's socket, which may come a moment after the project's events.
    demoted.wait_for_function("() => window.quireEditors[0].view.state.readOnly === true", timeout=5_000)
    assert demoted.evaluate("window.__sameDocument") is True
    screenshot(demoted, "shared-demoted-editor")


def test_a_file_dragged_into_a_folder_stays_open_for_the_coauthor_typing_in_it(opened, owner, coauthor, paper):
    intro_id = ProjectFile.objects.get(project=paper, path="sections/intro.tex").pk
    mover = opened(owner, paper, "main.tex")
    typist = opened(coauthor, paper, "sections/intro.tex")
    typist.evaluate("() => { window.__sameDocument = true; }")
    mover.get_by_role("button", name="+ Folder").click()
    dialog = mover.get_by_role("dialog", name="New folder")
    dialog.get_by_label("Path").fill("chapters")
    dialog.get_by_role("button", name="Create").click()
    expect(mover.locator('.tree-row[data-path="chapters"]')).to_be_visible()

    typed_at_end(typist, "Before the move. ")
    mover.locator(f'.tree-row[data-file-id="{intro_id}"]').drag_to(mover.locator('.tree-row[data-path="chapters"]'))
    typed_at_end(typist, "After the move.")

    expect(typist.locator("[data-file-path]")).to_have_text("chapters/intro.tex", timeout=5_000)
    expect(typist).to_have_url(re.compile(r"file=chapters%2Fintro\.tex"))
    expect(typist.locator("[data-sync-status]")).to_have_text("All changes saved")
    assert typist.evaluate("window.__sameDocument") is True
    moved = ProjectFile.objects.get(pk=intro_id)
    assert moved.path == "chapters/intro.tex"
    text = editor_text(typist)
    assert "Before the move. After the move." in text
    stored = mover.evaluate(
        "async (url) => (await fetch(url)).text()", f"/v1/projects/{paper.pk}/files/chapters/intro.tex"
    )
    assert stored == text
    screenshot(typist, "shared-moved-while-typing")


def test_a_coauthors_change_during_a_drag_waits_for_the_drop_and_then_shows(opened, api_for, owner, coauthor, paper):
    page = opened(owner, paper)
    intro = ProjectFile.objects.get(project=paper, path="sections/intro.tex").pk
    page.evaluate(
        """(id) => {
            window.__dragged = document.querySelector(`.tree-row[data-file-id="${id}"]`);
            window.__transfer = new DataTransfer();
            const start = new DragEvent("dragstart", {bubbles: true, dataTransfer: window.__transfer});
            window.__dragged.dispatchEvent(start);
        }""",
        intro,
    )
    added = api_for(coauthor).put(
        f"/v1/projects/{paper.pk}/files/notes.tex",
        data=b"% notes\n",
        headers={"Content-Type": "application/octet-stream"},
    )
    assert added.status_code == 201, added.text

    expect(page.locator("[data-tree-slot]")).to_have_attribute("data-stale", "true", timeout=5_000)
    assert page.evaluate("window.__dragged.isConnected") is True  # the drag's source row is still the page's
    expect(page.locator('.tree-row[data-path="notes.tex"]')).to_have_count(0)
    page.evaluate(
        """() => {
            const folder = document.querySelector('.tree-row[data-path="main.tex"]');
            for (const type of ["dragenter", "dragover", "drop"]) {
                const options = {bubbles: true, cancelable: true, dataTransfer: window.__transfer};
                folder.dispatchEvent(new DragEvent(type, options));
            }
            const end = new DragEvent("dragend", {bubbles: true, dataTransfer: window.__transfer});
            window.__dragged.dispatchEvent(end);
        }"""
    )

    expect(page.locator('.tree-row[data-path="notes.tex"]')).to_be_visible()
    expect(page.locator('.tree-row[data-path="intro.tex"]')).to_be_visible()
    expect(page.locator("[data-tree-slot]")).not_to_have_attribute("data-stale", "true")
    assert ProjectFile.objects.get(pk=intro).path == "intro.tex"


def test_a_zip_dropped_on_a_folder_is_unpacked_there(opened, owner, paper):
    page = opened(owner, paper)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("figures/plot.txt", "data")
        zipped.writestr("notes.tex", "% notes\n")

    page.evaluate(
        """([bytes, name]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([new Uint8Array(bytes)], name, {type: "application/zip"}));
            const target = document.querySelector('.tree-row[data-path="sections"]');
            for (const type of ["dragenter", "dragover", "drop"]) {
                target.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: transfer}));
            }
        }""",
        [list(archive.getvalue()), "extra.zip"],
    )

    expect(page.locator('.tree-row[data-path="sections/notes.tex"]')).to_be_visible()
    expect(page.locator('.tree-row[data-path="sections/figures/plot.txt"]')).to_be_visible()
    expect(page.locator("[data-tree-status]")).to_have_text("Uploaded 2 files.")
    assert set(ProjectFile.objects.filter(project=paper).values_list("path", flat=True)) == {
        "main.tex", "sections/intro.tex", "sections/notes.tex", "sections/figures/plot.txt",
    }  # fmt: skip


def test_deleting_a_folder_says_how_many_files_go(opened, owner, paper):
    page = opened(owner, paper)

    page.locator('.tree-row[data-path="sections"] [data-tree-menu]').click()
    page.get_by_role("menuitem", name="Delete…").click()

    dialog = page.get_by_role("dialog", name="Delete sections/?")
    expect(dialog).to_contain_text("1 file in it will be deleted with it.")
    dialog.get_by_role("button", name="Delete").click()
    expect(page.locator('.tree-row[data-path="sections"]')).to_have_count(0)
    assert not ProjectFile.objects.filter(project=paper, path__startswith="sections/").exists()


def test_download_source_gives_back_the_project(opened, owner, paper):
    page = opened(owner, paper)
    typed_at_end(page, "% typed in the browser\n")
    expect(page.locator("[data-sync-status]")).to_have_text("All changes saved")

    with page.expect_download() as download:
        page.get_by_role("link", name="Download source").click()

    assert download.value.suggested_filename == "Shared paper.zip"
    with zipfile.ZipFile(download.value.path()) as archive:
        assert archive.read("sections/intro.tex").decode() == INTRO
        assert archive.read("main.tex").decode() == editor_text(page)


def test_a_zip_of_a_paper_uploaded_as_a_new_project_builds(signed_in, owner):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("my-paper/main.tex", PAPER)
        zipped.writestr("my-paper/sections/intro.tex", INTRO)
    page = signed_in(owner)
    page.goto("/projects/new")

    page.get_by_label("Archive").set_input_files(
        files=[{"name": "my-paper.zip", "mimeType": "application/zip", "buffer": archive.getvalue()}]
    )
    page.get_by_role("button", name="Upload project").click()

    expect(page.get_by_role("heading", name="my-paper")).to_be_visible()
    project = Project.objects.get(name="my-paper")
    assert (project.type, project.entry_path) == ("latex", "main.tex")
    built(page)
    pane_shows(page, "Introductory words.")
    assert ProjectFile.objects.filter(project=project, path="sections/intro.tex").exists()
    assert ProcessingJob.objects.get(project_id=project.pk).state == JobState.SUCCEEDED
    screenshot(page, "shared-zip-uploaded-project-built")


def test_an_office_file_is_previewed_in_the_pdf_pane_and_the_project_pdf_is_one_click_away(
    opened, api_for, owner, paper
):
    from tests.office.documents import docx_with

    built(opened(owner, paper))
    written = api_for(owner).put(  # through the server: its storage is not this process's
        f"/v1/projects/{paper.pk}/files/notes/minutes.docx",
        data=docx_with(["Quarterly", "minutes"]),
        headers={"Content-Type": "application/octet-stream"},
    )
    assert written.status_code == 201, written.text
    page = opened(owner, paper, "main.tex")
    page.goto(f"/projects/{paper.pk}/?file=notes/minutes.docx")

    pane_shows(page, "Quarterly minutes", timeout_ms=120_000)
    expect(page.locator("[data-pdf-pane]")).to_have_attribute("data-kind", "preview")
    expect(page.locator("[data-pdf-title]")).to_have_text("notes/minutes.docx")
    expect(page.locator(".office-preview iframe")).to_have_count(0)  # the pane shows it, not a frame of its own
    screenshot(page, "shared-office-preview-in-the-pane")

    page.get_by_role("button", name="Project PDF").click()
    pane_shows(page, "Closing words.")
    expect(page.locator("[data-pdf-pane]")).to_have_attribute("data-kind", "build")


# Records every moment the page shows a failed build's error count beside a log that says there were none.
WATCH_FOR_A_STALE_LOG = """() => {
  window.__staleLog = [];
  const check = () => {
    const errors = document.querySelector("#build-status .count-errors");
    const body = document.querySelector("#build-log [data-build-log-body]");
    if (errors && parseInt(errors.textContent, 10) > 0 && body && body.textContent.includes("no errors or warnings")) {
      window.__staleLog.push(errors.textContent);
    }
  };
  new MutationObserver(check).observe(document.body, {subtree: true, childList: true, characterData: true});
}"""


def test_a_failed_build_never_stands_beside_the_last_good_logs_no_errors_or_its_word_count(opened, owner, paper):
    page = opened(owner, paper)
    built(page)
    expect(page.locator("#build-status .word-count")).to_be_visible()
    expect(page.locator("#build-log")).to_contain_text("no errors or warnings")
    page.evaluate(WATCH_FOR_A_STALE_LOG)

    typed_before_closing_words(page, "\\undefinedcommandhere ")
    expect(page.locator("[data-sync-status]")).to_have_text("All changes saved")
    page.locator("#build-button").click()
    expect(page.locator("#build-status")).to_have_attribute("data-state", "failed", timeout=BUILD_MS)

    expect(page.locator("#build-log")).to_contain_text("Undefined control sequence")
    assert page.evaluate("window.__staleLog") == []
    expect(page.locator("#build-status .word-count")).to_have_count(0)
    expect(page.locator("#build-status [data-output]")).to_contain_text(f"PDF by {owner.username}")
    screenshot(page, "shared-failed-build-log-and-counts")
