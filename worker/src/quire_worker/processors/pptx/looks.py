"""How a shape and its text look once inheritance is resolved: the shape's own properties, then its
``<p:style>`` references into the theme; for text, the shape's list style, then (placeholders) the layout's
and the master's placeholder and the master's text styles, then the theme's text colour.
"""

from dataclasses import dataclass

from quire_worker.processors.pptx.theme import A, P, Theme

_FILLS = {f"{A}{name}" for name in ("noFill", "solidFill", "gradFill", "blipFill", "pattFill", "grpFill")}
DEFAULT_LINE_POINTS = 0.75  # DrawingML's default line width (9525 EMU)
DEFAULT_INSETS = (7.2, 3.6, 7.2, 3.6)  # left, top, right, bottom: 0.1 in and 0.05 in
_ANCHORS = {"t": "top", "ctr": "horizon", "b": "bottom", "just": "horizon", "dist": "horizon"}
_MASTER_STYLES = {"title": "titleStyle", "subtitle": "bodyStyle", "body": "bodyStyle"}


@dataclass(frozen=True)
class ShapeLook:
    fill: str | None = None  # "rrggbb"
    outline: str | None = None
    outline_width: float = DEFAULT_LINE_POINTS  # points
    approximation: str = ""  # what was simplified, for the report


def shape_look(element, theme: Theme) -> ShapeLook:
    properties = element.find(f"{P}spPr")
    style = element.find(f"{P}style")
    fill, approximation = _fill(_fill_child(properties), style, theme)
    outline, width = _outline(properties, style, theme)
    return ShapeLook(fill=fill, outline=outline, outline_width=width, approximation=approximation)


def _fill_child(parent):
    if parent is None:
        return None
    return next((child for child in parent if child.tag in _FILLS), None)


def _fill(own, style, theme: Theme) -> tuple[str | None, str]:
    placeholder = None
    if own is None and style is not None and (reference := style.find(f"{A}fillRef")) is not None:
        picked = theme.style_fill(reference)
        if picked is None:
            return None, ""
        placeholder, own = picked
    return fill_color(own, theme, placeholder)


def fill_color(fill, theme: Theme, placeholder: str | None = None) -> tuple[str | None, str]:
    """A fill element's colour and, when it is more than one colour, what was simplified."""
    if fill is None:
        return None, ""
    kind = fill.tag.removeprefix(A)
    if kind == "solidFill":
        return theme.first_color(fill, placeholder), ""
    if kind == "gradFill":
        colors = [color for stop in fill.findall(f"{A}gsLst/{A}gs") if (color := theme.first_color(stop, placeholder))]
        return _average(colors), "gradient filled with the average of its colours"
    if kind == "pattFill":
        return theme.first_color(fill.find(f"{A}fgClr"), placeholder), "pattern filled with its foreground colour"
    return None, ""


def _average(colors: list[str]) -> str | None:
    if not colors:
        return None
    channels = [sum(int(color[index : index + 2], 16) for color in colors) / len(colors) for index in (0, 2, 4)]
    return "".join(f"{round(channel):02x}" for channel in channels)


def _outline(properties, style, theme: Theme) -> tuple[str | None, float]:
    line = properties.find(f"{A}ln") if properties is not None else None
    width = line.get("w") if line is not None else None
    own = _fill_child(line)
    placeholder = None
    if own is None and style is not None and (reference := style.find(f"{A}lnRef")) is not None:
        picked = theme.style_line(reference)
        if picked is not None:
            placeholder, themed = picked
            own, width = _fill_child(themed), width or themed.get("w")
    color, _ = fill_color(own, theme, placeholder)
    points = int(width) / 12700 if width and width.isdigit() else DEFAULT_LINE_POINTS
    return color, round(points, 2)


@dataclass(frozen=True)
class TextLook:
    """A text frame's inherited text properties, most specific first."""

    theme: Theme
    sources: tuple  # elements holding ``lvl1pPr``…``lvl9pPr`` (list styles, the master's text styles)
    style_color: str | None = None  # the shape's ``<a:fontRef>`` colour
    style_font: str = ""  # the shape's ``<a:fontRef>`` font (theme-resolved)

    def level(self, level: int):
        """The ``lvlNpPr`` elements for a paragraph of ``level`` (0-based), most specific first."""
        name = f"{A}lvl{min(level, 8) + 1}pPr"
        return [found for source in self.sources if (found := source.find(name)) is not None]

    def alignment(self, paragraph_properties, level: int) -> str | None:
        for properties in (paragraph_properties, *self.level(level)):
            if properties is not None and properties.get("algn"):
                return properties.get("algn")
        return None

    def run_value(self, run_properties, level: int, read):
        """The first value ``read(rPr-like element)`` gives: the run's own, then each level's ``defRPr``."""
        for properties in (run_properties, *(each.find(f"{A}defRPr") for each in self.level(level))):
            if properties is not None and (value := read(properties)) is not None:
                return value
        return None

    def color(self, run_properties, level: int) -> str | None:
        own = self.run_value(run_properties, level, lambda rpr: solid_color(rpr, self.theme))
        if own is not None:
            return own
        if self.style_color is not None:
            return self.style_color
        return self.theme.scheme.get(self.theme.color_map.get("tx1", "dk1"))

    def font(self, run_properties, level: int) -> str:
        def latin(rpr):
            element = rpr.find(f"{A}latin")
            return self.theme.font(element.get("typeface", "")) or None if element is not None else None

        return self.run_value(run_properties, level, latin) or self.style_font or self.theme.minor_font

    def east_asian_font(self, run_properties, level: int) -> str:
        def east_asian(rpr):
            element = rpr.find(f"{A}ea")
            return self.theme.font(element.get("typeface", "")) or None if element is not None else None

        return self.run_value(run_properties, level, east_asian) or self.theme.minor_east_asian


def solid_color(properties, theme: Theme) -> str | None:
    """The colour of a properties element's ``<a:solidFill>`` (a table cell's run reads it with no theme)."""
    fill = _fill_child(properties)
    return fill_color(fill, theme)[0] if fill is not None and fill.tag == f"{A}solidFill" else None


def text_look(shape, theme: Theme, role: str) -> TextLook:
    chain = inheritance_chain(shape)
    sources = [found for element in chain if (found := element.find(f"{P}txBody/{A}lstStyle")) is not None]
    if shape.is_placeholder:
        styles = shape.part.slide_layout.slide_master._element.find(f"{P}txStyles")
        master_style = styles.find(f"{P}{_MASTER_STYLES.get(role, 'otherStyle')}") if styles is not None else None
        if master_style is not None:
            sources.append(master_style)
    style = shape._element.find(f"{P}style")
    reference = style.find(f"{A}fontRef") if style is not None else None
    style_color = theme.first_color(reference) if reference is not None else None
    style_font = ""
    if reference is not None:
        style_font = {"major": theme.major_font, "minor": theme.minor_font}.get(reference.get("idx", ""), "")
    return TextLook(theme=theme, sources=tuple(sources), style_color=style_color, style_font=style_font)


def inheritance_chain(shape) -> list:
    """The shape's element, then for a placeholder its layout's and its master's placeholder's."""
    chain, current = [shape._element], shape
    for _ in range(2):
        try:
            current = current._base_placeholder if current.is_placeholder else None
        except (AttributeError, KeyError, NotImplementedError, ValueError):
            current = None
        if current is None:
            break
        chain.append(current._element)
    return chain


@dataclass(frozen=True)
class FrameLayout:
    anchor: str = "top"  # Typst's vertical alignment: "top", "horizon" or "bottom"
    insets: tuple[float, float, float, float] = DEFAULT_INSETS  # points: left, top, right, bottom
    font_scale: float = 1.0  # a shrink-on-overflow autofit's scale
    spacing_scale: float = 1.0  # its line spacing reduction, as a factor


def frame_layout(shape) -> FrameLayout:
    """Anchoring, insets and autofit of the shape's ``<a:bodyPr>``, inherited through placeholders."""
    bodies = [
        found for element in inheritance_chain(shape) if (found := element.find(f"{P}txBody/{A}bodyPr")) is not None
    ]

    def attribute(name: str):
        return next((body.get(name) for body in bodies if body.get(name) is not None), None)

    insets = tuple(
        int(value) / 12700 if (value := attribute(name)) and value.lstrip("-").isdigit() else default
        for name, default in zip(("lIns", "tIns", "rIns", "bIns"), DEFAULT_INSETS, strict=True)
    )
    fit = bodies[0].find(f"{A}normAutofit") if bodies else None
    font_scale = int(fit.get("fontScale", "100000")) / 100_000 if fit is not None else 1.0
    spacing = 1 - int(fit.get("lnSpcReduction", "0")) / 100_000 if fit is not None else 1.0
    return FrameLayout(
        anchor=_ANCHORS.get(attribute("anchor") or "t", "top"),
        insets=tuple(round(value, 2) for value in insets),
        font_scale=min(1.0, max(0.1, font_scale)),
        spacing_scale=min(1.0, max(0.1, spacing)),
    )
