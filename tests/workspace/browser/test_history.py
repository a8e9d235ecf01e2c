"""The project page's History panel in real browsers (Debian's Chromium) against a real Quire: versions with their
authors in their colours, diffs by @codemirror/merge, restores that reach a co-author's open editor live, labels,
and a viewer who reads it all but restores nothing."""

import io
import zipfile

import pytest
from playwright.sync_api import Page, expect

from access.facade import user_colour
from access.services import member_set
from tests.browser_support import screenshot
from tests.workspace.browser.conftest import PAPER

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

REVISED = PAPER.replace("Closing words.\n", "A new ending.\nWritten by the co-author.\n")


def rgb(colour: str) -> str:
    """``#rrggbb`` as the browser's computed styles write it."""
    red, green, blue = (int(colour[index : index + 2], 16) for index in (1, 3, 5))
    return f"rgb({red}, {green}, {blue})"


def first_version_ended(api_for, owner, paper) -> None:
    """Label the project as the paper fixture made it: the label ends version 1 there, so whatever comes next is
    a version of its own (however soon it comes)."""
    answer = api_for(owner).post(f"/v1/projects/{paper.pk}/labels", json={"name": "First draft"})
    assert answer.status_code == 201, answer.text


def written_by(api_for, user, paper, text: str) -> None:
    answer = api_for(user).put(
        f"/v1/projects/{paper.pk}/files/main.tex",
        data=text.encode(),
        headers={"Content-Type": "application/octet-stream"},
    )
    assert answer.status_code in (200, 201), answer.text


def paragraph_deleted_by_typing(page: Page, paragraph: str) -> None:
    """Select the paragraph in the page's editor and press Backspace, as its author would."""
    page.evaluate(
        """(words) => { const {view} = window.quireEditors[0]; const from = view.state.doc.toString().indexOf(words);
                        view.dispatch({selection: {anchor: from, head: from + words.length}}); view.focus(); }""",
        paragraph,
    )
    page.keyboard.press("Backspace")


def history_opened(page: Page) -> None:
    page.get_by_role("button", name="History").click()
    expect(page.get_by_role("heading", name="History", exact=True)).to_be_visible()
    expect(page.locator(".history-version").first).to_be_visible()


def editor_text(page: Page) -> str:
    return page.evaluate("window.quireEditors[0].view.state.doc.toString()")


def test_the_history_lists_a_coauthors_change_with_their_name_in_their_colour(
    signed_in, api_for, owner, coauthor, paper
):
    first_version_ended(api_for, owner, paper)
    written_by(api_for, coauthor, paper, REVISED)
    page = signed_in(owner)
    page.goto(f"/projects/{paper.pk}/")

    history_opened(page)

    newest = page.locator(".history-version").first
    expect(newest).to_have_attribute("data-version", "2")
    expect(newest.locator(".history-author")).to_have_text([coauthor.username])
    chip = newest.locator(f'.history-author[data-author="{coauthor.username}"]')
    expect(chip).to_have_css("color", rgb(user_colour(user_id=coauthor.pk)))
    expect(chip.locator(".history-author-dot")).to_have_css("background-color", rgb(user_colour(user_id=coauthor.pk)))
    change = newest.locator('.history-change[data-path="main.tex"]')
    expect(change).to_contain_text("edited")
    expect(change.locator(".history-added")).to_have_text("+2")
    expect(change.locator(".history-removed")).to_have_text("\N{MINUS SIGN}1")
    first = page.locator('.history-version[data-version="1"]')
    expect(first.locator(".history-author")).to_have_text([owner.username])
    expect(first.locator(".history-label-badge")).to_have_text(["First draft"])
    expect(first.locator('.history-change[data-path="sections/intro.tex"]')).to_contain_text("created")
    expect(page.locator("[data-history-comparing]")).to_have_text("Version 1 → Version 2")  # the newest, shown
    screenshot(page, "history-coauthors-change")


def test_a_diff_shows_the_deleted_paragraph_removed_and_the_inserted_lines_in_their_authors_colour(
    signed_in, api_for, owner, coauthor, paper
):
    first_version_ended(api_for, owner, paper)
    written_by(api_for, coauthor, paper, REVISED)
    page = signed_in(owner)
    page.goto(f"/projects/{paper.pk}/")
    history_opened(page)
    colour = rgb(user_colour(user_id=coauthor.pk))

    page.locator('.history-version[data-version="2"] .history-change[data-path="main.tex"]').click()

    expect(page.locator("[data-history-comparing]")).to_have_text("Version 1 → Version 2")
    split = page.locator('[data-history-merge="split"]')
    expect(split.locator(".cm-merge-a del")).to_have_text("Closing words.")
    expect(split.locator(".cm-merge-b ins")).to_have_text(["A new ending.", "Written by the co-author."])
    inserted = split.locator(".cm-merge-b .cm-line", has_text="A new ending.")
    expect(inserted).to_have_attribute("title", f"Written by {coauthor.username}")
    expect(inserted).to_have_css("border-left-color", colour)
    unchanged = split.locator(".cm-merge-b .cm-line", has_text="documentclass")
    expect(unchanged).not_to_have_attribute("title", f"Written by {coauthor.username}")
    expect(unchanged).to_have_css("border-left-style", "none")
    screenshot(page, "history-diff-side-by-side")

    page.get_by_role("button", name="Unified").click()

    unified = page.locator('[data-history-merge="unified"]')
    expect(unified.locator(".cm-deletedChunk")).to_have_text("Closing words.")
    inserted = unified.locator(".cm-line", has_text="Written by the co-author.")
    expect(inserted).to_have_attribute("title", f"Written by {coauthor.username}")
    expect(inserted).to_have_css("border-left-color", colour)
    screenshot(page, "history-diff-unified")


def test_a_version_is_compared_with_any_other_version(signed_in, api_for, owner, coauthor, paper):
    first_version_ended(api_for, owner, paper)
    written_by(api_for, coauthor, paper, REVISED)
    written_by(api_for, owner, paper, REVISED + "% the owner's afterword\n")
    page = signed_in(owner)
    page.goto(f"/projects/{paper.pk}/")
    history_opened(page)

    page.locator('.history-version[data-version="3"] .history-change[data-path="main.tex"]').click()
    page.locator("[data-history-against-version]").fill("1")
    page.locator("[data-history-against-version]").dispatch_event("change")

    expect(page.locator("[data-history-comparing]")).to_have_text("Version 1 → Version 3")
    split = page.locator('[data-history-merge="split"]')
    expect(split.locator(".cm-merge-a del")).to_have_text("Closing words.")
    expect(split.locator(".cm-merge-b .cm-line", has_text="A new ending.")).to_have_attribute(
        "title", f"Written by {coauthor.username}"
    )
    expect(split.locator(".cm-merge-b .cm-line", has_text="afterword")).to_have_attribute(
        "title", f"Written by {owner.username}"
    )


def test_a_file_restored_in_the_history_panel_comes_back_in_a_coauthors_open_editor(
    opened, api_for, owner, coauthor, paper
):
    first_version_ended(api_for, owner, paper)
    theirs, mine = opened(coauthor, paper), opened(owner, paper)
    theirs.evaluate("() => { window.__sameDocument = true; }")
    paragraph_deleted_by_typing(theirs, "Closing words.\n")
    for page in (theirs, mine):
        page.wait_for_function("() => !window.quireEditors[0].view.state.doc.toString().includes('Closing words.')")
    history_opened(mine)

    mine.locator('.history-version[data-version="1"] .history-change[data-path="main.tex"]').click()
    expect(mine.locator("[data-history-comparing]")).to_have_text("Nothing → Version 1")
    mine.get_by_role("button", name="Restore this file").click()

    theirs.wait_for_function("() => window.quireEditors[0].view.state.doc.toString().includes('Closing words.')")
    assert editor_text(theirs) == PAPER
    assert theirs.evaluate("window.__sameDocument") is True
    expect(mine.locator("[data-history-status]")).to_contain_text("main.tex is restored")
    newest = mine.locator(".history-version").first
    expect(newest).to_contain_text("Restored version 1")
    expect(newest.locator(".history-author")).to_have_text([owner.username])
    expect(newest.locator('.history-change[data-path="main.tex"]')).to_contain_text("restored")
    screenshot(theirs, "history-restored-in-the-coauthors-editor")


def test_the_whole_project_is_restored_after_a_confirmation(signed_in, api_for, owner, coauthor, paper):
    first_version_ended(api_for, owner, paper)
    written_by(api_for, coauthor, paper, REVISED)
    page = signed_in(owner)
    page.goto(f"/projects/{paper.pk}/")
    history_opened(page)
    page.locator('.history-version[data-version="1"] .history-version-head').click()
    expect(page.locator("[data-history-comparing]")).to_be_visible()
    questions = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))

    page.get_by_role("button", name="Restore the whole project to this version").click()

    expect(page.locator(".history-version").first).to_contain_text("Restored version 1")
    assert questions and questions[0].startswith("Restore the whole project to version 1?")
    stored = api_for(owner).get(f"/v1/projects/{paper.pk}/files/main.tex")
    assert stored.text == PAPER


def test_a_label_made_in_the_panel_is_listed_with_its_zip(signed_in, api_for, owner, coauthor, paper):
    first_version_ended(api_for, owner, paper)
    written_by(api_for, coauthor, paper, REVISED)
    page = signed_in(owner)
    page.goto(f"/projects/{paper.pk}/")
    history_opened(page)

    page.get_by_label("Label name").fill("Submitted")
    page.get_by_role("button", name="Label current state").click()

    label = page.locator('.history-label[data-label="Submitted"]')
    expect(label).to_contain_text("Version 2")
    expect(page.locator('.history-version[data-version="2"] .history-label-badge')).to_have_text(["Submitted"])
    with page.expect_download() as download:
        label.get_by_role("link", name="Download zip").click()
    with zipfile.ZipFile(io.BytesIO(download.value.path().read_bytes())) as archive:
        assert archive.read("main.tex").decode() == REVISED

    page.locator('.history-label[data-label="First draft"]').get_by_role("button", name="Version 1").click()

    expect(page.locator(".history-version")).to_have_count(1)
    expect(page.locator('.history-version[data-version="1"]')).to_have_attribute("aria-current", "true")
    expect(page.locator("[data-history-from]")).to_contain_text("From version 1 down")


def test_the_history_filters_by_author_and_by_file(signed_in, api_for, owner, coauthor, paper):
    first_version_ended(api_for, owner, paper)
    written_by(api_for, coauthor, paper, REVISED)
    page = signed_in(owner)
    page.goto(f"/projects/{paper.pk}/")
    history_opened(page)
    expect(page.locator(".history-version")).to_have_count(2)

    page.get_by_label("Author", exact=True).select_option(owner.username)

    expect(page.locator(".history-version")).to_have_count(1)
    expect(page.locator(".history-version")).to_have_attribute("data-version", "1")

    page.get_by_label("Author", exact=True).select_option("")
    page.get_by_label("File", exact=True).select_option("main.tex")

    expect(page.locator(".history-version")).to_have_count(2)
    page.get_by_label("File", exact=True).select_option("sections/intro.tex")
    expect(page.locator(".history-version")).to_have_count(1)
    expect(page.locator("[data-history-comparing]")).to_have_text("Nothing → Version 1")
    expect(page.locator("[data-history-file]")).to_have_attribute("data-history-file", "sections/intro.tex")


def test_load_more_lists_the_versions_after_the_first_fifty(signed_in, api_for, owner, paper):
    for number in range(2, 52):  # each label ends a version: the next write starts another
        assert api_for(owner).post(f"/v1/projects/{paper.pk}/labels", json={"name": f"Before {number}"}).ok
        written_by(api_for, owner, paper, f"{PAPER}% version {number}\n")
    page = signed_in(owner)
    page.goto(f"/projects/{paper.pk}/")
    history_opened(page)
    expect(page.locator(".history-version")).to_have_count(50)
    expect(page.locator(".history-version").first).to_have_attribute("data-version", "51")

    page.get_by_role("button", name="Load more").click()

    expect(page.locator(".history-version")).to_have_count(51)
    expect(page.locator(".history-version").last).to_have_attribute("data-version", "1")
    expect(page.get_by_role("button", name="Load more")).to_be_hidden()


def test_a_viewer_reads_the_history_and_its_diffs_but_is_offered_no_restore_or_label(
    signed_in, api_for, owner, coauthor, reader, paper
):
    member_set(actor_id=owner.pk, project_id=paper.pk, username=reader.username, role="viewer")
    first_version_ended(api_for, owner, paper)
    written_by(api_for, coauthor, paper, REVISED)
    page = signed_in(reader)
    page.goto(f"/projects/{paper.pk}/")
    history_opened(page)

    page.locator('.history-version[data-version="2"] .history-change[data-path="main.tex"]').click()

    expect(page.locator('[data-history-merge="split"] .cm-merge-a del')).to_have_text("Closing words.")
    expect(page.get_by_role("button", name="Restore this file")).to_be_hidden()
    expect(page.get_by_role("button", name="Restore the whole project to this version")).to_be_hidden()
    expect(page.get_by_role("button", name="Label current state")).to_be_hidden()
    expect(page.get_by_role("link", name="Download zip")).to_be_visible()
