"""Comments in a real browser: one author comments on a sentence, a co-author sees the thread at once (no
reload), replies and resolves it, and the highlight follows its sentence while text is typed before it."""

import pytest
from playwright.sync_api import Page, expect

from access.services import member_set
from tests.browser_support import editor_opened, page_in, screenshot, user_who_signs_in
from tests.factories import ProjectFactory
from tests.live_site import site_fixture

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SENTENCE = "This is the sentence under discussion."


quire = site_fixture("quire", "comments", workers=2)


@pytest.fixture
def reviewer(transactional_db):
    return user_who_signs_in()


@pytest.fixture
def paper(author, reviewer):
    from workspace import services

    project = ProjectFactory(owner=author, name="Demo paper")
    text = f"\\documentclass{{article}}\n\\begin{{document}}\nOpening words. {SENTENCE} Closing.\n\\end{{document}}\n"
    services.file_write(actor_id=author.pk, project_id=project.pk, path="main.tex", data=text.encode())
    member_set(actor_id=author.pk, project_id=project.pk, username=reviewer.username, role="viewer")
    return project


def _page(chromium, url: str) -> Page:
    return page_in(chromium, url, width=1400, height=900)


def _open(page: Page, user, project) -> None:
    editor_opened(page, user, project)
    expect(page.locator("[data-comments-panel]")).to_be_visible()


def _select(page: Page, words: str) -> None:
    page.evaluate(
        """(words) => { const {view} = window.quireEditors[0]; const from = view.state.doc.toString().indexOf(words);
                        view.dispatch({selection: {anchor: from, head: from + words.length}}); view.focus(); }""",
        words,
    )


def _caret_before(page: Page, words: str) -> None:
    page.evaluate(
        """(words) => { const {view} = window.quireEditors[0]; const at = view.state.doc.toString().indexOf(words);
                        view.dispatch({selection: {anchor: at}}); view.focus(); }""",
        words,
    )


def _thread(page: Page):
    return page.locator("[data-comment-threads] [data-thread-id]")


def test_a_thread_between_two_browsers_follows_its_sentence(chromium, quire, paper, author, reviewer):
    demo, coauthor = _page(chromium, quire.url), _page(chromium, quire.url)
    try:
        _open(demo, author, paper)
        _open(coauthor, reviewer, paper)  # a viewer: reads, may not type, may comment

        _select(demo, SENTENCE)
        demo.locator("[data-comment-add]").click()
        demo.locator("[data-comment-text]").fill("Is this claim supported?")
        demo.locator("[data-comment-compose] button[type=submit]").click()

        expect(_thread(coauthor)).to_have_count(1)  # arrived without a reload
        expect(_thread(coauthor).locator("blockquote")).to_have_text(SENTENCE)
        expect(coauthor.locator(".cm-comment")).to_have_text(SENTENCE)
        coauthor.locator("[data-reply-text]").fill("Yes: see the appendix.")
        coauthor.locator(".comment-reply button[type=submit]").click()

        expect(_thread(demo).locator("[data-comment-body]")).to_have_text(
            ["Is this claim supported?", "Yes: see the appendix."]
        )
        demo.evaluate("() => window.quireEditors[0].view.dispatch({changes: {from: 0, insert: '% ñ 😀 note\\n'}})")
        expect(coauthor.locator(".cm-comment")).to_have_text(SENTENCE)  # the highlight followed its text
        _caret_before(demo, SENTENCE)
        demo.keyboard.type("Typed before it. ")  # typed keys: the editor goes on syncing with a thread open
        expect(demo.locator("[data-sync-status]")).to_have_text("All changes saved")
        coauthor.wait_for_function(
            "(text) => window.quireEditors[0].view.state.doc.toString().includes(text)",
            arg="Typed before it. " + SENTENCE,
        )
        expect(demo.locator(".cm-comment")).to_have_text(SENTENCE)

        coauthor.locator("[data-resolve]").click()
        expect(_thread(demo)).to_have_count(0)
        demo.locator("[data-comments-show=resolved]").click()
        expect(_thread(demo)).to_have_count(1)
        expect(demo.locator(".cm-comment")).to_have_count(0)  # a resolved thread is not highlighted
        screenshot(demo, "comment-thread-resolved")
    finally:
        demo.context.close()
        coauthor.context.close()
