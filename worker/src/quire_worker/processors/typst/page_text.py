"""The text of each compiled page as lines of positioned runs, read back from the PDF Typst made (pypdf).

A run is what one text-showing operation draws: its text, the origin of its baseline (points from the page's
top-left corner), its size, font (the PostScript name without the subset tag), fill colour and the link it
lies under. Runs in a math font are left out: formulas stay in the page's picture. Runs on one baseline
make a line, unless a gap wider than three of their size (table cells, columns) or a formula separates them;
a line that starts with a list marker followed by more text is a list item.
"""

import contextlib
import io
import re
from dataclasses import dataclass, field, replace

from pypdf import PdfReader

_SUBSET_TAG = re.compile(r"^[A-Z]{6}\+")
_STYLE_WORDS = ("Bold", "Black", "Heavy", "Semibold", "SemiBold", "Italic", "Oblique", "Regular", "Book", "Medium")
_MARKERS = {"•", "‣", "–", "-", "◦", "▪", "∘"}
_NUMBERED = re.compile(r"^(\d+)[.)]$")
GAP_IN_SIZES = 3.0  # a gap wider than this many font sizes splits a line into separate boxes


@dataclass(frozen=True)
class TextRun:
    text: str
    x: float
    baseline: float
    size: float
    font: str
    color: str = "000000"
    link: str | None = None
    after_formula: bool = False  # a formula (in the picture) comes between this run and the one before
    width: float = 0.0  # of the text-showing operation this run begins (0 for its later runs)

    @property
    def bold(self) -> bool:
        return any(word in self.font for word in ("Bold", "Black", "Heavy", "Semibold", "SemiBold"))

    @property
    def italic(self) -> bool:
        return "Italic" in self.font or "Oblique" in self.font

    @property
    def family(self) -> str:
        """``LibertinusSerif-BoldItalic`` → ``Libertinus Serif``."""
        stem = self.font.split("-", 1)[0]
        for word in _STYLE_WORDS:
            stem = stem.removesuffix(word)
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", stem).strip() or self.font


@dataclass
class TextLine:
    runs: list[TextRun]
    bullet: str | None = None  # the marker ("•", "1." …) of a list item; ``runs`` then hold its text only
    bullet_x: float = 0.0  # a nested item's marker stands further right
    align: str | None = None  # "center" or "right" for a line centred on the page or ending at its margin

    @property
    def right(self) -> float:
        """Where the line's text ends (its start when the widths are unknown)."""
        return max(run.x + run.width for run in self.runs)

    @property
    def x(self) -> float:
        return self.bullet_x if self.bullet else self.runs[0].x

    @property
    def baseline(self) -> float:
        return self.runs[0].baseline

    @property
    def size(self) -> float:
        return max(run.size for run in self.runs)

    @property
    def text(self) -> str:
        return "".join(run.text for run in self.runs).strip()


@dataclass
class PageText:
    width: float  # the page's size, points
    height: float
    lines: list[TextLine] = field(default_factory=list)
    formula_words: int = 0  # words drawn in a math font: in the formulas' pictures, not editable


def is_math_font(font: str) -> bool:
    return "Math" in font


def document_title(pdf: bytes) -> str | None:
    """The title the document set (Typst writes ``#set document(title: …)`` into the PDF's information)."""
    metadata = PdfReader(io.BytesIO(pdf)).metadata
    return (metadata.title or "").strip() or None if metadata else None


def page_texts(pdf: bytes) -> list[PageText]:
    reader = PdfReader(io.BytesIO(pdf))
    pages = [_page_text(page) for page in reader.pages]
    starts = [line.x for page in pages for line in page.lines]
    margin = min(starts) if starts else 0.0  # the document's left margin: where its leftmost line starts
    for text in pages:
        _aligned(text.lines, text.width, margin)
    return pages


def _page_text(page) -> PageText:
    height = float(page.mediabox.height)
    links = _links(page, height)
    widths = FontWidths(page)
    runs: list[TextRun] = []
    state = {"color": "000000", "formula": False}
    result = PageText(float(page.mediabox.width), height)

    def before(operator, operands, cm, tm):
        if operator in (b"sc", b"scn", b"rg", b"g", b"k"):
            state["color"] = _color(operands) or state["color"]
        elif operator == b"Tf" and len(operands) == 2:
            state["font"], state["font_size"] = str(operands[0]), float(operands[1])
        elif operator in (b"TJ", b"Tj") and operands:
            shown_operands = operands[0] if operator == b"TJ" else operands
            scale = abs(tm[0] * cm[0]) or 1.0
            state["width"] = widths.of(state.get("font"), shown_operands) * state.get("font_size", 0.0) * scale

    def shown(text, cm, tm, font, size):
        text = text.replace("\n", "")  # pypdf's own line breaks between operations
        if not text or font is None:
            return
        name = _SUBSET_TAG.sub("", str(font.get("/BaseFont", "")).lstrip("/")).removesuffix("-Identity-H")
        if is_math_font(name):
            result.formula_words += len(text.split())
            state["formula"] = True
            return
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        scale = abs(tm[3] * cm[3]) or abs(tm[0] * cm[0]) or 1.0
        baseline = height - y
        runs.append(TextRun(text, round(x, 2), round(baseline, 2), round(size * scale, 2), name, state["color"],
                            _link_at(links, x, y), after_formula=state["formula"],
                            width=round(state.pop("width", 0.0), 2)))  # fmt: skip
        state["formula"] = False

    page.extract_text(visitor_text=shown, visitor_operand_before=before)
    result.lines = _list_items(_lines(runs))
    return result


class FontWidths:
    """Glyph advances of a page's fonts (``/W`` of a CID font, ``/Widths`` of a simple one), in 1/1000 em."""

    def __init__(self, page):
        resources = page.get("/Resources") or {}
        self.fonts = resources.get("/Font") or {}
        self.tables: dict[str, tuple[dict[int, float], float, int]] = {}

    def of(self, font_name: str | None, operands) -> float:
        """The advance, in ems, of a ``TJ``/``Tj`` operand list in the named font (0 when not known)."""
        if font_name is None or font_name not in self.fonts:
            return 0.0
        if font_name not in self.tables:
            self.tables[font_name] = _width_table(self.fonts[font_name].get_object())
        table, default, code_bytes = self.tables[font_name]
        total = 0.0
        for operand in operands:
            if isinstance(operand, bytes | str):
                data = operand if isinstance(operand, bytes) else operand.encode("latin-1", "replace")
                starts = range(0, len(data), code_bytes)
                codes = [int.from_bytes(data[start : start + code_bytes], "big") for start in starts]
                total += sum(table.get(code, default) for code in codes)
            else:
                with contextlib.suppress(TypeError, ValueError):
                    total -= float(operand)  # a TJ adjustment moves the next glyph left by its thousandths
        return total / 1000


def _width_table(font) -> tuple[dict[int, float], float, int]:
    if font.get("/DescendantFonts"):
        descendant = font["/DescendantFonts"][0].get_object()
        table: dict[int, float] = {}
        entries = list(descendant.get("/W") or [])
        index = 0
        while index + 1 < len(entries):
            first, following = int(entries[index]), entries[index + 1]
            if isinstance(following, list):
                table.update({first + offset: float(width) for offset, width in enumerate(following)})
                index += 2
            elif index + 2 < len(entries):
                table.update({code: float(entries[index + 2]) for code in range(first, int(following) + 1)})
                index += 3
            else:
                break
        return table, float(descendant.get("/DW", 1000)), 2
    first = int(font.get("/FirstChar", 0))
    return {first + offset: float(width) for offset, width in enumerate(font.get("/Widths") or [])}, 0.0, 1


def _aligned(lines: list[TextLine], page_width: float, margin: float) -> None:
    """Mark the lines centred on the page, and those ending at its right margin (taken as wide as the left
    one), within 1.5 pt; a line as wide as the text area is neither."""
    for line in lines:
        start, end = line.x, line.right
        if end <= start or start < margin + 0.1 * page_width:
            continue
        if abs((start + end) / 2 - page_width / 2) <= 1.5:
            line.align = "center"
        elif abs(end - (page_width - margin)) <= 1.5:
            line.align = "right"


def _color(operands) -> str | None:
    values = []
    for operand in operands:
        try:
            values.append(float(operand))
        except (TypeError, ValueError):
            return None  # a pattern or a named colour: keep the previous one
    if len(values) == 1:
        values *= 3
    elif len(values) == 4:
        cyan, magenta, yellow, black = values
        values = [(1 - cyan) * (1 - black), (1 - magenta) * (1 - black), (1 - yellow) * (1 - black)]
    if len(values) != 3:
        return None
    return "".join(f"{round(min(1.0, max(0.0, value)) * 255):02x}" for value in values)


def _links(page, height: float) -> list[tuple[float, float, float, float, str]]:
    found = []
    for annotation in page.get("/Annots") or []:
        annotation = annotation.get_object()
        action = annotation.get("/A")
        if annotation.get("/Subtype") != "/Link" or action is None or action.get("/S") != "/URI":
            continue
        x0, y0, x1, y1 = (float(value) for value in annotation["/Rect"])
        found.append((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1), str(action.get("/URI"))))
    return found


def _link_at(links, x: float, y: float) -> str | None:
    for x0, y0, x1, y1, uri in links:
        if x0 - 0.5 <= x < x1 - 0.5 and y0 - 0.5 <= y <= y1 + 0.5:  # a run that starts inside the link
            return uri
    return None


def _lines(runs: list[TextRun]) -> list[TextLine]:
    lines: list[TextLine] = []
    for run in runs:
        current = lines[-1].runs if lines else None
        if current and _continues(current, run):
            current.append(run)
        else:
            lines.append(TextLine([run]))
    return [_trimmed(line) for line in lines if line.text]


def _trimmed(line: TextLine) -> TextLine:
    """The line without the spaces at its ends (a box starts and ends with its text)."""
    runs = list(line.runs)
    runs[0] = replace(runs[0], text=runs[0].text.lstrip())
    runs[-1] = replace(runs[-1], text=runs[-1].text.rstrip())
    line.runs = [run for run in runs if run.text]
    return line


def _continues(runs: list[TextRun], run: TextRun) -> bool:
    """Whether ``run`` goes on the line ``runs`` began; text after a formula starts a box of its own, at its
    place (the formula between is in the picture)."""
    last = runs[-1]
    if run.after_formula:
        return False
    same_baseline = abs(last.baseline - run.baseline) <= 0.35 * max(last.size, run.size)
    # Superscripts and subscripts sit off the baseline but within the line's height.
    raised = run.size < last.size and abs(last.baseline - run.baseline) <= 0.6 * last.size
    near = run.x >= last.x and run.x - last.x <= (len(last.text) + GAP_IN_SIZES) * last.size
    return (same_baseline or raised) and near


def _list_items(lines: list[TextLine]) -> list[TextLine]:
    for line in lines:
        marker = line.runs[0].text.strip()
        if len(line.runs) > 1 and (marker in _MARKERS or _NUMBERED.match(marker)):
            line.bullet, line.bullet_x = marker, line.runs[0].x
            line.runs = line.runs[1:]
            line.runs[0] = replace(line.runs[0], text=line.runs[0].text.lstrip())
    return lines
