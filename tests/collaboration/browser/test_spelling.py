"""Spell checking in the live editor, in a real Chromium: the browser's checker is on for a LaTeX source by
default, commands and names (`\\section`, `\\usepackage{lmodern}`, math) are marked as not prose, and turning it
off with the editor bar's *Spelling* switch is remembered after a reload."""

import pytest
from playwright.sync_api import Page, expect

from tests.browser_support import editor_opened, screenshot
from tests.factories import ProjectFactory
from tests.live_site import site_fixture

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

NOT_PROSE_TEXTS = """() => [...document.querySelectorAll('.cm-content [spellcheck="false"]')]
                      .map((mark) => mark.textContent)"""


quire = site_fixture("quire", "spelling")


@pytest.fixture
def paper(author):
    return ProjectFactory(owner=author, name="Demo paper", starter=True)


@pytest.fixture
def page(chromium, quire):
    context = chromium.new_context(base_url=quire.url, viewport={"width": 1280, "height": 860})
    context.set_default_timeout(20_000)
    yield context.new_page()
    context.close()


def _open(page: Page, user, project) -> None:
    editor_opened(page, user, project)


def test_spell_checking_is_on_for_prose_and_off_for_commands_and_names(page, author, paper):
    _open(page, author, paper)
    page.evaluate("window.quireEditors[0].view.dispatch({changes: {from: 0, insert: 'Teh cost is $x^2$.\\n'}})")

    expect(page.locator(".cm-content")).to_have_attribute("spellcheck", "true")
    expect(page.get_by_label("Spelling")).to_be_checked()
    page.wait_for_function(f"({NOT_PROSE_TEXTS})().includes('$x^2$')")
    not_prose = page.evaluate(NOT_PROSE_TEXTS)
    assert {"\\section", "\\usepackage{lmodern}", "\\documentclass[11pt]{article}", "$x^2$"} <= set(not_prose)
    assert not any("Teh" in text or "document was built" in text for text in not_prose)


def test_turning_spelling_off_is_remembered_after_a_reload(page, author, paper):
    _open(page, author, paper)

    page.get_by_label("Spelling").uncheck()
    expect(page.locator(".cm-content")).to_have_attribute("spellcheck", "false")
    page.reload()
    expect(page.locator(".live-editor-ready")).to_be_visible()

    expect(page.get_by_label("Spelling")).not_to_be_checked()
    expect(page.locator(".cm-content")).to_have_attribute("spellcheck", "false")
    page.get_by_label("Spelling").check()
    expect(page.locator(".cm-content")).to_have_attribute("spellcheck", "true")
    screenshot(page, "spelling-switch")
