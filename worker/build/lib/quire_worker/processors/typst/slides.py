"""Writes a ``Deck`` as one Typst file: a page per slide, every shape placed where it was.

The output is plain, editable Typst: ``#place`` with absolute offsets for each shape, headings
for titles, ``-``/``+`` lists for bullets, ``#table`` for tables, ``#image`` for pictures and
line comments for speaker notes. Every piece of deck text goes through ``typst_markup``.
"""

from quire_worker.processors.pptx.slide_model import (
    Deck,
    FilledShape,
    Frame,
    Paragraph,
    PictureBlock,
    Run,
    Slide,
    TableBlock,
    TableCell,
    TextBlock,
)
from quire_worker.processors.typst.markup import (
    continues_expression,
    escape_text,
    line_comment,
    points,
    string_literal,
)

ROLE_TEXT_SIZES = {"title": 40, "subtitle": 24, "body": 24, "text": 18}
TEXT_INSET = "(x: 7.2pt, y: 3.6pt)"  # PowerPoint's default text box insets: 0.1 in and 0.05 in


def deck_source(deck: Deck, *, source_name: str, profile: str) -> str:
    lines = [
        *line_comment(f"Imported by Quire from {source_name} (pptx.import.typst/v1, {profile} profile)."),
        "// One page per slide; each shape is placed where it was on the slide.",
        "// What could not be carried over is listed in the import's conversion report.",
        f"#set page(width: {points(deck.width)}, height: {points(deck.height)}, margin: 0pt)",
        "#set text(size: 18pt)",
        "#set par(spacing: 0.6em)",
        '#show heading: set text(size: 40pt, weight: "regular")',
        "#show heading: set block(above: 0pt, below: 0pt)",
    ]
    for slide in deck.slides:
        lines += ["", *_slide_lines(slide)]
    return "\n".join(lines) + "\n"


def _slide_lines(slide: Slide) -> list[str]:
    heading = f"Slide {slide.number}" + (f": {slide.title}" if slide.title.strip() else "")
    lines = line_comment(heading, prefix="// ─── ")
    if slide.hidden:
        lines.append("// (hidden in the original presentation)")
    if slide.notes.strip():
        lines += ["// Speaker notes:", *line_comment(slide.notes, prefix="//   ")]
    lines.append(f"#page{_page_arguments(slide)}[")
    for block in slide.blocks:
        lines += _block_lines(block)
    lines.append("]")
    return lines


def _page_arguments(slide: Slide) -> str:
    arguments = []
    if slide.fill:
        arguments.append(f'fill: rgb("#{slide.fill}")')
    if slide.background_path:
        arguments.append(f"background: image({string_literal(slide.background_path)}, width: 100%, height: 100%)")
    return f"({', '.join(arguments)})" if arguments else ""


def _block_lines(block) -> list[str]:
    if isinstance(block, TextBlock):
        return _text_lines(block)
    if isinstance(block, TableBlock):
        return _table_lines(block)
    if isinstance(block, PictureBlock):
        return [_placed(block.frame, _picture_code(block))]
    if isinstance(block, FilledShape):
        shape = "ellipse" if block.ellipse else "rect"
        size = f"width: {points(block.frame.width)}, height: {points(block.frame.height)}"
        return [_placed(block.frame, f'{shape}({size}, fill: rgb("#{block.fill}"))')]
    raise TypeError(f"unknown block {type(block).__name__}")


def _placed(frame: Frame, body_code: str) -> str:
    """``#place`` at the frame's top-left corner, rotated about the frame's centre if needed."""
    opening, closing = _placed_around(frame, body_code)
    return opening + closing


def _placed_around(frame: Frame, head: str) -> tuple[str, str]:
    """The text before and after a placed element's trailing content (``head[...]``)."""
    opening = f"#place(top + left, dx: {points(frame.x)}, dy: {points(frame.y)}, "
    closing = ")"
    if frame.rotation % 360:
        opening += f"rotate({round(frame.rotation, 2):g}deg, reflow: false, "
        closing += ")"
    return opening + head, closing


def _frame_block(frame: Frame) -> str:
    return f"block(width: {points(frame.width)}, height: {points(frame.height)}, inset: {TEXT_INSET})"


def _text_lines(block: TextBlock) -> list[str]:
    opening, closing = _placed_around(block.frame, _frame_block(block.frame) + "[")
    lines = [opening, f"#set text(size: {ROLE_TEXT_SIZES[block.role]}pt)"]
    if block.role == "title":
        lines.append("= " + " \\ ".join(runs_markup(paragraph.runs) for paragraph in block.paragraphs))
    else:
        lines += _paragraph_lines(block.paragraphs)
    lines.append("]" + closing)
    return lines


def _paragraph_lines(paragraphs: tuple[Paragraph, ...]) -> list[str]:
    lines: list[str] = []
    previous_was_item = False
    for paragraph in paragraphs:
        markup = runs_markup(paragraph.runs)
        if paragraph.bullet and markup:
            marker = "+" if paragraph.bullet == "number" else "-"
            lines.append(f"{'  ' * paragraph.level}{marker} {markup}")
            previous_was_item = True
            continue
        if previous_was_item or lines:
            lines.append("")
        previous_was_item = False
        if not markup:
            lines.append("#v(0.6em)")
        elif paragraph.align in ("center", "right", "justify"):
            lines.append(_aligned(paragraph.align, markup))
        else:
            lines.append(markup)
    return lines


def _aligned(align: str, markup: str) -> str:
    if align == "justify":
        return f"#par(justify: true)[{markup}]"
    return f"#align({align})[{markup}]"


def runs_markup(runs: tuple[Run, ...]) -> str:
    """The runs as one line of markup; the first character is escaped as if at a line start."""
    pieces: list[str] = []
    for run in runs:
        at_line_start = not "".join(pieces).strip()
        piece = "\\ " if run.line_break else _run_markup(run, at_line_start=at_line_start)
        if pieces and pieces[-1].endswith("]") and pieces[-1].startswith("#") and continues_expression(piece):
            pieces[-1] += ";"
        pieces.append(piece)
    return "".join(pieces).strip()


def _run_markup(run: Run, *, at_line_start: bool) -> str:
    markup = escape_text(run.text, at_line_start=at_line_start)
    if not markup.strip():
        return markup
    if run.bold:
        markup = f"#strong[{markup}]"
    if run.italic:
        markup = f"#emph[{markup}]"
    if run.underline:
        markup = f"#underline[{markup}]"
    styles = []
    if run.size:
        styles.append(f"size: {points(run.size)}")
    if run.color:
        styles.append(f'fill: rgb("#{run.color}")')
    if styles:
        markup = f"#text({', '.join(styles)})[{markup}]"
    if run.link:
        markup = f"#link({string_literal(run.link)})[{markup}]"
    return markup


def _table_lines(block: TableBlock) -> list[str]:
    columns = ", ".join(points(width) for width in block.column_widths)
    rows = ", ".join(points(height) for height in block.row_heights)
    lines = [
        f"#place(top + left, dx: {points(block.frame.x)}, dy: {points(block.frame.y)}, table(",
        f"  columns: ({columns},),",
        f"  rows: ({rows},),",
        "  align: horizon,",
    ]
    for index, row in enumerate(block.rows):
        cells = ", ".join(_cell_code(cell, bold=block.header and index == 0) for cell in row)
        if block.header and index == 0:
            lines.append(f"  table.header({cells}),")
        else:
            lines.append(f"  {cells},")
    lines.append("))")
    return lines


def _cell_code(cell: TableCell, *, bold: bool) -> str:
    markup = " \\ ".join(runs_markup(paragraph.runs) for paragraph in cell.paragraphs)
    content = f"[#strong[{markup}]]" if bold and markup else f"[{markup}]"
    if cell.colspan > 1 or cell.rowspan > 1:
        return f"table.cell(colspan: {cell.colspan}, rowspan: {cell.rowspan}){content}"
    return content


def _picture_code(block: PictureBlock) -> str:
    left, top, right, bottom = block.crop
    width, height = block.frame.width, block.frame.height
    alt = f", alt: {string_literal(block.description)}" if block.description else ""
    if not any(block.crop):
        size = f"width: {points(width)}, height: {points(height)}"
        return f'image({string_literal(block.asset_path)}, {size}, fit: "stretch"{alt})'
    full_width, full_height = width / (1 - left - right), height / (1 - top - bottom)
    full_size = f"width: {points(full_width)}, height: {points(full_height)}"
    image = f'image({string_literal(block.asset_path)}, {full_size}, fit: "stretch"{alt})'
    offset = f"dx: {points(-left * full_width)}, dy: {points(-top * full_height)}"
    window = f"width: {points(width)}, height: {points(height)}, clip: true"
    return f"box({window}, place(top + left, {offset}, {image}))"
