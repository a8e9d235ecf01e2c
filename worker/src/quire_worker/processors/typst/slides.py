"""Writes a ``Deck`` as one Typst file: a page per slide, every shape placed where it was.

The output is plain, editable Typst: ``#place`` with absolute offsets for each shape, headings
for titles, ``-``/``+`` lists for bullets, ``#table`` for tables, ``#image`` for pictures and
line comments for speaker notes. Every piece of deck text goes through ``typst_markup``.
"""

from dataclasses import dataclass

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


def deck_source(deck: Deck, *, source_name: str, profile: str) -> str:
    lines = [
        *line_comment(f"Imported by Quire from {source_name} (pptx.import.typst/v1, {profile} profile)."),
        "// One page per slide; each shape is placed where it was on the slide.",
        "// What could not be carried over is listed in the import's conversion report.",
        f"#set page(width: {points(deck.width)}, height: {points(deck.height)}, margin: 0pt)",
        "#set text(size: 18pt)",
        "#set par(spacing: 0.6em)",
        '#show heading: set text(size: 1em, weight: "regular")',  # a title is as large as its text box says
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
    if slide.fill and slide.fill != "ffffff":  # a page is white already
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
        arguments = [f"width: {points(block.frame.width)}", f"height: {points(block.frame.height)}"]
        if block.fill:
            arguments.append(f'fill: rgb("#{block.fill}")')
        if block.outline:
            arguments.append(f'stroke: {points(block.outline_width)} + rgb("#{block.outline}")')
        return [_placed(block.frame, f"{shape}({', '.join(arguments)})")]
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


def _frame_block(block: TextBlock) -> str:
    left, top, right, bottom = block.insets
    inset = f"(left: {points(left)}, top: {points(top)}, right: {points(right)}, bottom: {points(bottom)})"
    return f"block(width: {points(block.frame.width)}, height: {points(block.frame.height)}, inset: {inset})"


@dataclass(frozen=True)
class RunDefaults:
    """What a text block sets once (``#set text``): its runs say only how they differ."""

    size: float | None = None
    font: str | None = None
    color: str | None = None


def _text_lines(block: TextBlock) -> list[str]:
    opening, closing = _placed_around(block.frame, _frame_block(block) + "[")
    defaults = _block_defaults(block)
    settings = [f"size: {points(defaults.size)}"]
    if defaults.font:
        settings.append(f"font: {string_literal(defaults.font)}")
    if defaults.color:
        settings.append(f'fill: rgb("#{defaults.color}")')
    lines = [opening, f"#set text({', '.join(settings)})"]
    if block.spacing_scale < 1:
        lines.append(f"#set par(leading: {round(0.65 * block.spacing_scale, 3):g}em)")
    if block.anchor != "top":
        lines.append(f"#align({block.anchor})[")
    if block.role == "title":
        heading = "= " + " \\ ".join(runs_markup(paragraph.runs, defaults=defaults) for paragraph in block.paragraphs)
        align = block.paragraphs[0].align if block.paragraphs else None
        lines.append(f"#align({align})[{heading}]" if align in ("center", "right") else heading)
    else:
        lines += _paragraph_lines(block.paragraphs, defaults=defaults)
    if block.anchor != "top":
        lines.append("]")
    lines.append("]" + closing)
    return lines


def _block_defaults(block: TextBlock) -> RunDefaults:
    """The size, font and colour of most of the block's characters."""
    tallies: tuple[dict, dict, dict] = ({}, {}, {})
    for paragraph in block.paragraphs:
        for run in paragraph.runs:
            for tally, value in zip(tallies, (run.size, run.font, run.color), strict=True):
                if value is not None:
                    tally[value] = tally.get(value, 0) + len(run.text)
    size, font, color = (max(tally, key=tally.get) if tally else None for tally in tallies)
    return RunDefaults(size=size or ROLE_TEXT_SIZES[block.role], font=font, color=color)


def _paragraph_lines(paragraphs: tuple[Paragraph, ...], *, defaults: RunDefaults = RunDefaults()) -> list[str]:
    lines: list[str] = []
    previous_was_item = False
    for paragraph in paragraphs:
        markup = runs_markup(paragraph.runs, defaults=defaults)
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


def runs_markup(runs: tuple[Run, ...], *, defaults: RunDefaults = RunDefaults()) -> str:
    """The runs as one line of markup, each saying how it differs from ``defaults``; the first character is
    escaped as if at a line start."""
    pieces: list[str] = []
    for run in runs:
        at_line_start = not "".join(pieces).strip()
        piece = "\\ " if run.line_break else _run_markup(run, at_line_start=at_line_start, defaults=defaults)
        if pieces and pieces[-1].endswith("]") and pieces[-1].startswith("#") and continues_expression(piece):
            pieces[-1] += ";"
        pieces.append(piece)
    return "".join(pieces).strip()


def _run_markup(run: Run, *, at_line_start: bool, defaults: RunDefaults) -> str:
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
    if run.size and run.size != defaults.size:
        styles.append(f"size: {points(run.size)}")
    if run.color and run.color != defaults.color:
        styles.append(f'fill: rgb("#{run.color}")')
    if run.font and run.font != defaults.font:
        styles.append(f"font: {string_literal(run.font)}")
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
