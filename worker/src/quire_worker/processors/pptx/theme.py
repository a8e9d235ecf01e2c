"""A slide's theme as DrawingML resolves it: scheme colours through the master's colour map, the colour
modifiers (``lumMod``/``lumOff``/``satMod``/``tint``/``shade``…), the theme's fill and line styles that a
shape's ``<p:style>`` refers to, and its major and minor fonts.

Tint and shade mix with white and black in linear RGB, as ECMA-376 (20.1.2.3.34, .31) defines them and
PowerPoint renders them; the luminance and saturation modifiers work in HSL.
"""

import colorsys
from dataclasses import dataclass, field, replace

from lxml import etree
from pptx.opc.constants import RELATIONSHIP_TYPE

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_COLOR_TAGS = {f"{A}{name}" for name in ("srgbClr", "schemeClr", "sysClr", "prstClr", "scrgbClr", "hslClr")}
# Office's default map, used when a master names none.
_DEFAULT_MAP = {"bg1": "lt1", "tx1": "dk1", "bg2": "lt2", "tx2": "dk2"}
_PRESET = {"black": "000000", "white": "ffffff", "red": "ff0000", "green": "008000", "blue": "0000ff",
           "yellow": "ffff00", "gray": "808080", "grey": "808080", "orange": "ffa500", "purple": "800080",
           "darkBlue": "00008b", "darkRed": "8b0000", "darkGreen": "006400", "lightGray": "d3d3d3"}  # fmt: skip


@dataclass(frozen=True)
class Theme:
    scheme: dict[str, str] = field(default_factory=dict)  # dk1, lt1, …, accent1…6, hlink → "rrggbb"
    color_map: dict[str, str] = field(default_factory=lambda: dict(_DEFAULT_MAP))
    fill_styles: tuple = ()  # the theme's fillStyleLst children (``<p:style>``'s fillRef idx 1…)
    line_styles: tuple = ()  # lnStyleLst children (lnRef idx 1…)
    background_styles: tuple = ()  # bgFillStyleLst children (fillRef and bgRef idx 1001…)
    major_font: str = ""
    minor_font: str = ""
    major_east_asian: str = ""
    minor_east_asian: str = ""

    def color(self, element, placeholder: str | None = None) -> str | None:
        """The colour of a colour element (``<a:srgbClr>``, ``<a:schemeClr>``, …) with its modifiers applied;
        ``phClr`` is ``placeholder`` (the colour a style reference gives)."""
        tag, value = element.tag, element.get("val", "")
        if tag == f"{A}srgbClr":
            base = value
        elif tag == f"{A}schemeClr":
            base = placeholder if value == "phClr" else self.scheme.get(self.color_map.get(value, value))
        elif tag == f"{A}sysClr":
            base = element.get("lastClr") or ("ffffff" if value == "window" else "000000")
        elif tag == f"{A}prstClr":
            base = _PRESET.get(value)
        elif tag == f"{A}scrgbClr":
            linear = [int(element.get(name, "0")) / 100_000 for name in ("r", "g", "b")]
            base = _hex([_encoded(channel) for channel in linear])
        elif tag == f"{A}hslClr":
            hue, sat, lum = (int(element.get(name, "0")) for name in ("hue", "sat", "lum"))
            base = _hex(colorsys.hls_to_rgb(hue / 21_600_000, lum / 100_000, sat / 100_000))
        else:
            return None
        if not base or len(base) != 6:
            return None
        return _modified(base.lower(), element)

    def first_color(self, parent, placeholder: str | None = None) -> str | None:
        """The colour of ``parent``'s colour child (a ``<a:solidFill>``, a style reference, a gradient stop)."""
        if parent is None:
            return None
        for child in parent:
            if child.tag in _COLOR_TAGS:
                return self.color(child, placeholder)
        return None

    def font(self, typeface: str) -> str:
        """A typeface name with the theme's ``+mj-lt``/``+mn-lt``/``+mj-ea``/``+mn-ea`` resolved."""
        return {
            "+mj-lt": self.major_font,
            "+mn-lt": self.minor_font,
            "+mj-ea": self.major_east_asian,
            "+mn-ea": self.minor_east_asian,
        }.get(typeface, typeface)

    def style_fill(self, reference) -> tuple[str, object] | None:
        """What a ``<a:fillRef>``/``<a:bgRef>`` picks: (the reference's colour, the theme's fill element)."""
        index = int(reference.get("idx", "0") or 0)
        if index >= 1001:
            styles, index = self.background_styles, index - 1001
        else:
            styles, index = self.fill_styles, index - 1
        if not 0 <= index < len(styles):
            return None
        return self.first_color(reference), styles[index]

    def style_line(self, reference) -> tuple[str, object] | None:
        index = int(reference.get("idx", "0") or 0) - 1
        if not 0 <= index < len(self.line_styles):
            return None
        return self.first_color(reference), self.line_styles[index]


def slide_theme(slide, masters: dict | None = None) -> Theme:
    """The theme of ``slide``'s master, with the master's colour map and the slide's override of it; ``masters``
    keeps each master's theme, read once for all its slides."""
    master = slide.slide_layout.slide_master
    masters = {} if masters is None else masters
    key = str(master.part.partname)
    if key not in masters:
        masters[key] = master_theme(master)
    theme = masters[key]
    override = slide._element.find(f"{P}clrMapOvr/{A}overrideClrMapping")
    if override is None:
        return theme
    return replace(theme, color_map={**theme.color_map, **override.attrib})


def master_theme(master) -> Theme:
    """A slide master's theme part, with the master's colour map."""
    color_map = dict(_DEFAULT_MAP)
    mapping = master._element.find(f"{P}clrMap")
    if mapping is not None:
        color_map.update(mapping.attrib)
    try:
        part = master.part.part_related_by(RELATIONSHIP_TYPE.THEME)
        root = etree.fromstring(part.blob, parser=etree.XMLParser(resolve_entities=False, no_network=True))
    except (KeyError, etree.XMLSyntaxError, ValueError):
        return Theme(color_map=color_map)
    elements = root.find(f"{A}themeElements")
    if elements is None:
        return Theme(color_map=color_map)
    base = Theme()
    scheme = {}
    for entry in elements.iterfind(f"{A}clrScheme/*"):
        color = base.first_color(entry)
        if color:
            scheme[entry.tag.removeprefix(A)] = color
    fonts = elements.find(f"{A}fontScheme")
    formats = elements.find(f"{A}fmtScheme")
    return Theme(
        scheme=scheme,
        color_map=color_map,
        fill_styles=_children(formats, "fillStyleLst"),
        line_styles=_children(formats, "lnStyleLst"),
        background_styles=_children(formats, "bgFillStyleLst"),
        major_font=_typeface(fonts, "majorFont", "latin"),
        minor_font=_typeface(fonts, "minorFont", "latin"),
        major_east_asian=_typeface(fonts, "majorFont", "ea"),
        minor_east_asian=_typeface(fonts, "minorFont", "ea"),
    )


def _children(formats, name: str) -> tuple:
    found = formats.find(f"{A}{name}") if formats is not None else None
    return tuple(found) if found is not None else ()


def _typeface(fonts, which: str, script: str) -> str:
    element = fonts.find(f"{A}{which}/{A}{script}") if fonts is not None else None
    return element.get("typeface", "") if element is not None else ""


def _modified(base: str, element) -> str:
    red, green, blue = (int(base[index : index + 2], 16) / 255 for index in (0, 2, 4))
    for modifier in element:
        name = modifier.tag.removeprefix(A)
        amount = int(modifier.get("val", "0") or 0) / 100_000
        if name in ("tint", "shade"):
            linear = [_decoded(channel) for channel in (red, green, blue)]
            mixed = [c * amount + (1 - amount) for c in linear] if name == "tint" else [c * amount for c in linear]
            red, green, blue = (_encoded(channel) for channel in mixed)
        elif name in ("lumMod", "lumOff", "satMod", "satOff"):
            hue, lum, sat = colorsys.rgb_to_hls(red, green, blue)
            if name == "lumMod":
                lum *= amount
            elif name == "lumOff":
                lum += amount
            elif name == "satMod":
                sat *= amount
            else:
                sat += amount
            red, green, blue = colorsys.hls_to_rgb(hue, _clamped(lum), _clamped(sat))
        elif name == "inv":
            red, green, blue = 1 - red, 1 - green, 1 - blue
        elif name == "gray":
            red = green = blue = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return _hex((red, green, blue))


def _decoded(channel: float) -> float:
    return channel / 12.92 if channel <= 0.04045 else ((channel + 0.055) / 1.055) ** 2.4


def _encoded(channel: float) -> float:
    channel = _clamped(channel)
    return channel * 12.92 if channel <= 0.0031308 else 1.055 * channel ** (1 / 2.4) - 0.055


def _clamped(value: float) -> float:
    return min(1.0, max(0.0, value))


def _hex(channels) -> str:
    return "".join(f"{round(_clamped(channel) * 255):02x}" for channel in channels)
