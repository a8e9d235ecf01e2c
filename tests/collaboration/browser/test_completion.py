"""Completion in the live editor, in a real Chromium against a real server: `\\ref{` offers the labels of every
file of the project, a label a co-author typed a moment ago in another file included; `\\cite{` the keys of the
project's .bib files with author and title; `\\begin{` brings its `\\end{…}`; `\\` the commands the project
defines. The project is the *Demo paper* starter, with a chapter and a bibliography added."""

import re

import pytest
from playwright.sync_api import Page, expect

from access.services import member_set
from tests.browser_support import editor_opened, page_in, screenshot, user_who_signs_in
from tests.factories import ProjectFactory
from tests.live_site import site_fixture
from workspace import services

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHAPTER = "\\section{Method}\\label{sec:method}\n\\newcommand{\\Reals}{\\mathbb{R}}\nWe measure.\n"
BIBLIOGRAPHY = """@book{knuth1984,
  author = {Donald E. Knuth},
  title = {The {\\TeX}book},
}
@article{lamport1986, author = {Leslie Lamport}, title = {Document Preparation}}
"""


# Typing reaches Workspace's copy of a file only after this pause: the labels must come from the live text.
quire = site_fixture("quire", "completion", environment={"COLLAB_PROJECTION_DELAY_SECONDS": "60"}, workers=2)


@pytest.fixture
def coauthor(transactional_db):
    return user_who_signs_in()


@pytest.fixture
def paper(author, coauthor):
    project = ProjectFactory(owner=author, name="Demo paper", starter=True)
    services.file_write(actor_id=author.pk, project_id=project.pk, path="chapters/method.tex", data=CHAPTER.encode())
    services.file_write(actor_id=author.pk, project_id=project.pk, path="refs.bib", data=BIBLIOGRAPHY.encode())
    member_set(actor_id=author.pk, project_id=project.pk, username=coauthor.username, role="editor")
    return project


def _page(chromium, url: str) -> Page:
    return page_in(chromium, url)


def _open(page: Page, user, project, path: str = "main.tex") -> None:
    editor_opened(page, user, project, path, saved=True)


def _caret_after(page: Page, words: str) -> None:
    """Put the caret right after ``words`` (on a line of its own below them) and focus the editor."""
    page.evaluate(
        """(words) => { const {view} = window.quireEditors[0];
                        const at = view.state.doc.toString().indexOf(words) + words.length;
                        view.dispatch({changes: {from: at, insert: '\\n'}, selection: {anchor: at + 1}});
                        view.focus(); }""",
        words,
    )


def _text(page: Page) -> str:
    return page.evaluate("window.quireEditors[0].view.state.doc.toString()")


def _option(page: Page, label: str):
    return page.locator(".cm-tooltip-autocomplete li").filter(
        has=page.locator(".cm-completionLabel", has_text=re.compile(f"^{re.escape(label)}$"))
    )


def test_ref_offers_a_label_a_coauthor_just_typed_in_another_file(chromium, quire, paper, author, coauthor):
    demo, other = _page(chromium, quire.url), _page(chromium, quire.url)
    try:
        _open(other, coauthor, paper, "chapters/method.tex")
        _open(demo, author, paper)
        _caret_after(other, "We measure.")
        other.keyboard.type("\\label{sec:fresh}")
        expect(other.locator("[data-sync-status]")).to_have_text("All changes saved")

        _caret_after(demo, "\\section{Hello}")
        demo.keyboard.type("See \\ref{")

        expect(_option(demo, "sec:fresh")).to_be_visible()
        expect(_option(demo, "sec:fresh").locator(".cm-completionDetail")).to_have_text("chapters/method.tex:4")
        expect(_option(demo, "sec:method")).to_be_visible()
        screenshot(demo, "completion-ref")
        _option(demo, "sec:fresh").click()
        assert "See \\ref{sec:fresh}\n" in _text(demo)
    finally:
        demo.context.close()
        other.context.close()


@pytest.fixture
def demo(chromium, quire, paper, author):
    """The author's page on the paper's main.tex, the caret after its section heading."""
    page = _page(chromium, quire.url)
    _open(page, author, paper)
    _caret_after(page, "\\section{Hello}")
    yield page
    page.context.close()


def test_ref_offers_a_label_typed_in_the_open_file_at_once(demo):
    demo.keyboard.type("\\label{sec:hello} As in \\ref{")

    expect(_option(demo, "sec:hello").locator(".cm-completionDetail")).to_have_text("main.tex:10")


def test_cite_offers_the_keys_of_the_project_bibliography_with_author_and_title(demo):
    demo.keyboard.type("As shown \\cite{lamport1986, ")

    expect(_option(demo, "knuth1984").locator(".cm-completionDetail")).to_have_text("Knuth · The \\TeXbook")
    expect(_option(demo, "lamport1986")).to_have_count(0)  # already cited here
    screenshot(demo, "completion-cite")
    _option(demo, "knuth1984").click()
    assert "As shown \\cite{lamport1986, knuth1984}\n" in _text(demo)


def test_begin_completes_its_end(demo):
    demo.keyboard.type("\\begin{item")
    _option(demo, "itemize").click()
    demo.keyboard.type("\\item First")

    assert re.search(r"\\begin\{itemize\}\n\s+\\item First\n\\end\{itemize\}\n", _text(demo))


def test_end_offers_the_environment_left_open_first(demo):
    demo.keyboard.type("\\begin{center}\n\\end{")

    expect(demo.locator(".cm-tooltip-autocomplete li").first.locator(".cm-completionLabel")).to_have_text("center")


def test_a_line_break_opens_no_completion(demo):
    demo.keyboard.type("\\")
    expect(demo.locator(".cm-tooltip-autocomplete")).to_be_visible()  # the first backslash: a command begins
    demo.keyboard.type("\\")
    expect(demo.locator(".cm-tooltip-autocomplete")).to_have_count(0)
    demo.keyboard.press("Enter")

    assert "\\section{Hello}\n\\\\\n" in _text(demo)


def test_commands_the_project_defines_are_offered(demo):
    demo.keyboard.type("\\Rea")

    expect(_option(demo, "\\Reals").locator(".cm-completionDetail")).to_have_text("defined in the project")


def test_include_offers_the_project_tex_files_without_their_extension(demo):
    demo.keyboard.type("\\input{")

    expect(_option(demo, "chapters/method")).to_be_visible()
    expect(demo.locator(".cm-tooltip-autocomplete li")).to_have_count(1)  # not main.tex itself, nor refs.bib


@pytest.fixture
def typst_paper(author):
    project = ProjectFactory(owner=author, name="Typst paper", project_type="typst", starter=True)
    services.file_write(actor_id=author.pk, project_id=project.pk, path="method.typ", data=b"= Method <sec:method>\n")
    services.file_write(actor_id=author.pk, project_id=project.pk, path="figures/plot.png", data=b"\x89PNG\r\n\x1a\n")
    return project


def test_typst_reference_offers_the_labels_of_the_project(chromium, quire, typst_paper, author):
    demo = _page(chromium, quire.url)
    try:
        _open(demo, author, typst_paper, "main.typ")
        _caret_after(demo, "= A Quire project")
        demo.keyboard.type("See @")

        expect(_option(demo, "sec:method").locator(".cm-completionDetail")).to_have_text("method.typ:1")
    finally:
        demo.context.close()


def test_typst_image_offers_the_project_images(chromium, quire, typst_paper, author):
    demo = _page(chromium, quire.url)
    try:
        _open(demo, author, typst_paper, "main.typ")
        _caret_after(demo, "= A Quire project")
        demo.keyboard.type('#image("')

        expect(_option(demo, "figures/plot.png")).to_be_visible()
        expect(demo.locator(".cm-tooltip-autocomplete li")).to_have_count(1)
    finally:
        demo.context.close()


def test_typst_hash_offers_standard_library_functions(chromium, quire, typst_paper, author):
    demo = _page(chromium, quire.url)
    try:
        _open(demo, author, typst_paper, "main.typ")
        _caret_after(demo, "= A Quire project")
        demo.keyboard.type("#lore")

        _option(demo, "lorem").click()
        assert "\n#lorem\n" in _text(demo)
    finally:
        demo.context.close()
