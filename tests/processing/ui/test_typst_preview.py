"""The Typst live preview in a real browser: Debian's Chromium through Playwright, against a real Quire server
and a real worker agent building Typst (the preview needs no worker: typst.ts compiles in the page, from the live
text of the open file; the agent makes the durable PDF the pane also shows).

The preview reports each render on ``window.quirePreview`` and as a ``quire:preview-rendered`` event
(frontend/src/preview/main.js); the tests wait on those, and on what the page shows: its pages and CodeMirror's
lint marks. Each test leaves a screenshot of its end state under ``test-results/screenshots/``.
"""

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from quire_worker.processors.child_protocol import ConversionFailure
from quire_worker.processors.typst.compilation import PackageUse, refuse_registry_packages
from tests.browser_support import pane_shows, screenshot, sign_in
from tests.factories import ProjectFactory
from tests.live_site import site_fixture

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TYPST = "typst.compile.pdf/v1"
FIRST_COMPILE_MS = 60_000  # the compiler's WebAssembly (~30 MB) is compiled once per page, on a shared machine
ONE_PAGE = "= Live preview\n\nA first paragraph.\n"


# A server and a worker agent building Typst: the preview needs no worker, the durable PDF does.
quire = site_fixture(
    "quire",
    "typst-preview",
    operations=[TYPST],
    limits={"lease_seconds": 30, "session_ttl_seconds": 30},
    agent_slots=1,
)


@pytest.fixture
def typst_project(author):
    return ProjectFactory(owner=author, name="Typst notes", project_type="typst", starter=True)


@pytest.fixture
def page(chromium, quire, author, typst_project):
    context = chromium.new_context(base_url=quire.url, viewport={"width": 1280, "height": 860})
    context.set_default_timeout(20_000)
    page = context.new_page()
    # A failing test shows what the page said (pytest prints a failed test's output).
    page.on("console", lambda message: print(f"console.{message.type}: {message.text}"))
    page.on("pageerror", lambda error: print(f"page error: {error.stack}"))
    sign_in(page, author)
    page.goto(f"/projects/{typst_project.pk}/?file=main.typ")
    expect(page.locator("[data-sync-status]")).to_have_text("All changes saved")
    yield page
    context.close()


def _caught_up(page: Page, timeout: int = 20_000) -> dict:
    """The preview's report once it has rendered every edit made so far (``revision`` reaches ``edits``)."""
    try:
        page.wait_for_function(
            "() => { const p = window.quirePreview; return p && p.rendered > 0 && p.revision === p.edits; }",
            timeout=timeout,
        )
    except PlaywrightTimeoutError:
        status = page.locator("[data-typst-preview-status]").text_content()
        raise AssertionError(f"the preview fell behind: {page.evaluate('window.quirePreview')}, {status!r}") from None
    return page.evaluate("({...window.quirePreview})")


def _replace_text(page: Page, text: str) -> None:
    """Replace the open file's text, as an edit in the editor (so it is stored and previewed like typing)."""
    page.evaluate(
        """(text) => { const {view} = window.quireEditors[0];
                       view.dispatch({changes: {from: 0, to: view.state.doc.length, insert: text}});
                       view.dispatch({selection: {anchor: view.state.doc.length}}); view.focus(); }""",
        text,
    )


def _start_from(page: Page, text: str) -> dict:
    _caught_up(page, timeout=FIRST_COMPILE_MS)
    _replace_text(page, text)
    return _caught_up(page)


def _preview_pages(page: Page):
    return page.locator("[data-typst-preview-pages] canvas")


def test_preview_follows_typing_page_by_page(page):
    report = _start_from(page, ONE_PAGE)
    assert report["errors"] == []
    expect(_preview_pages(page)).to_have_count(1)

    page.keyboard.type("#pagebreak()\nA second page.")

    report = _caught_up(page)
    expect(_preview_pages(page)).to_have_count(2)
    assert report["errors"] == [] and report["milliseconds"] > 0
    screenshot(page, "typst-preview-two-pages")


def test_an_error_shows_at_its_line_while_typing_and_goes_when_fixed(page):
    _start_from(page, ONE_PAGE)  # three lines: the error goes on line 4

    page.keyboard.type("#undefined-function()")

    errors = _caught_up(page)["errors"]
    assert [(error["path"], error["line"]) for error in errors] == [("main.typ", 4)]
    assert "unknown variable: undefined-function" in errors[0]["message"]
    lint_mark = page.locator(".cm-lintRange-error")
    expect(lint_mark).to_have_text("undefined-function")
    expect(page.locator("[data-typst-preview-status]")).to_contain_text("main.typ:4:")
    screenshot(page, "typst-preview-error")

    page.keyboard.press("Shift+Home")
    page.keyboard.press("Backspace")

    assert _caught_up(page)["errors"] == []
    expect(lint_mark).to_have_count(0)


def test_a_registry_import_is_refused_with_the_builds_message(page):
    _start_from(page, ONE_PAGE)
    spec = "@preview/cetz:0.3.0"

    page.keyboard.type(f'#import "{spec}": canvas')

    errors = _caught_up(page)["errors"]
    with pytest.raises(ConversionFailure) as refusal:  # the build's own words, from the worker's code
        refuse_registry_packages([PackageUse(spec, "main.typ", 4)])
    builds_message = refusal.value.entries[0]["message"]
    assert [(error["line"], error["message"]) for error in errors] == [(4, builds_message)]
    expect(page.locator(".cm-lintRange-error")).to_have_text(f'"{spec}"')


def test_build_makes_the_durable_pdf_and_the_pane_toggles_between_it_and_the_live_preview(page):
    _start_from(page, "= Built for good\n\nThe durable copy.\n")
    expect(page.locator("[data-typst-preview-pages]")).to_be_visible()

    page.keyboard.press("Control+Enter")
    page.get_by_role("button", name="Last build's PDF").click()

    expect(page.locator("[data-pdf-pages]")).to_be_visible()
    expect(page.locator("[data-typst-preview-pages]")).to_be_hidden()
    pane_shows(page, "The durable copy.")
    screenshot(page, "typst-preview-last-build")
    page.get_by_role("button", name="Live preview").click()
    expect(page.locator("[data-typst-preview-pages]")).to_be_visible()
    expect(page.locator("[data-pdf-pages]")).to_be_hidden()


# The visual lines of text on a preview page, top to bottom, read from the canvas's pixels (not from the
# preview's own text map): each as {x, y, width, height} in CSS pixels from the canvas's top left.
_TEXT_LINES = """(index) => {
    const canvas = document.querySelectorAll("[data-typst-preview-pages] canvas")[index];
    const {width, height} = canvas;
    const data = canvas.getContext("2d").getImageData(0, 0, width, height).data;
    const gap = (width / 595.28) * 3;  // three points: closer rows are one line (an i's dot, a descender)
    const lines = [];
    let line = null;
    for (let y = 0; y < height; y++) {
        let left = -1, right = -1;
        for (let x = 0; x < width; x++) {
            const i = (y * width + x) * 4;
            if (data[i + 3] > 0 && data[i] < 128) { if (left < 0) left = x; right = x; }
        }
        if (left < 0) continue;
        if (!line || y - line.bottom > gap) { line = {top: y, bottom: y, left, right}; lines.push(line); }
        else Object.assign(line, {bottom: y, left: Math.min(line.left, left), right: Math.max(line.right, right)});
    }
    const scale = canvas.getBoundingClientRect().width / width;
    return lines.map((l) => ({x: l.left * scale, y: l.top * scale, width: (l.right - l.left) * scale,
                              height: (l.bottom - l.top + 1) * scale}));
}"""


_CURSOR_LINE = (
    "window.quireEditors[0].view.state.doc.lineAt(window.quireEditors[0].view.state.selection.main.head).number"
)


def _cursor_line(page: Page) -> int:
    return page.evaluate(f"() => {_CURSOR_LINE}")


def _cursor_comes_to(page: Page, line: int) -> None:
    try:
        page.wait_for_function(f"(line) => {_CURSOR_LINE} === line", arg=line, timeout=10_000)
    except PlaywrightTimeoutError:
        raise AssertionError(f"the cursor is on line {_cursor_line(page)}, not {line}") from None


def _click_text_line(page: Page, page_index: int, line_index: int, at: float = 0.3) -> None:
    line = page.evaluate(_TEXT_LINES, page_index)[line_index]
    position = {"x": line["x"] + line["width"] * at, "y": line["y"] + line["height"] / 2}
    _preview_pages(page).nth(page_index).click(position=position)


def test_a_click_in_the_preview_puts_the_cursor_on_the_line_that_made_that_text(page):
    # Beta's paragraph is one line in the preview made of two in the source: lines 5 and 6.
    text = "= Jumps\n\nAlpha paragraph here.\n\nBeta paragraph\nover there.\n\nGamma closing words.\n"
    _start_from(page, text)
    assert len(page.evaluate(_TEXT_LINES, 0)) == 4  # the heading and three paragraphs
    assert _cursor_line(page) == 9

    _click_text_line(page, 0, 2, at=0.2)  # "Beta paragraph"
    _cursor_comes_to(page, 5)
    _click_text_line(page, 0, 2, at=0.9)  # "over there."
    _cursor_comes_to(page, 6)
    _click_text_line(page, 0, 3)  # Gamma's
    _cursor_comes_to(page, 8)
    _click_text_line(page, 0, 1)  # Alpha's
    _cursor_comes_to(page, 3)
    _click_text_line(page, 0, 0, at=0.5)  # the heading
    _cursor_comes_to(page, 1)
    screenshot(page, "typst-preview-click-to-source")


def _put_cursor_on_line(page: Page, line: int) -> None:
    page.evaluate(
        """(line) => { const {view} = window.quireEditors[0];
                       view.dispatch({selection: {anchor: view.state.doc.line(line).from}}); view.focus(); }""",
        line,
    )


def _inside(inner: dict, outer: dict) -> bool:
    return (
        outer["x"] <= inner["x"] + inner["width"] / 2 <= outer["x"] + outer["width"]
        and outer["y"] <= inner["y"] + inner["height"] / 2 <= outer["y"] + outer["height"]
    )


def test_show_in_pdf_with_the_live_preview_shown_marks_the_cursors_line_in_the_preview(page):
    _start_from(page, "= Two pages\n\nA first paragraph.\n#pagebreak()\nA second page.\n")
    expect(_preview_pages(page)).to_have_count(2)
    mark = page.locator("[data-typst-preview-mark]")

    _put_cursor_on_line(page, 5)
    page.keyboard.press("Control+Alt+j")

    expect(mark).to_be_visible()
    expect(mark).to_have_attribute("data-page", "2")
    second_page = _preview_pages(page).nth(1)
    assert _inside(mark.bounding_box(), second_page.bounding_box())
    text_line = page.evaluate(_TEXT_LINES, 1)[0]  # the second page's only line, where the mark must be
    page_box = second_page.bounding_box()
    mark_box = mark.bounding_box()
    assert abs(mark_box["y"] + mark_box["height"] / 2 - (page_box["y"] + text_line["y"] + text_line["height"] / 2)) < 12
    expect(page.locator("[data-typst-preview-pages]")).to_be_visible()  # the pane stayed on the live preview
    screenshot(page, "typst-preview-show-in-preview")

    _put_cursor_on_line(page, 3)
    page.get_by_role("button", name="Show in PDF").click()

    expect(mark).to_have_attribute("data-page", "1")
    assert _inside(mark.bounding_box(), _preview_pages(page).nth(0).bounding_box())
