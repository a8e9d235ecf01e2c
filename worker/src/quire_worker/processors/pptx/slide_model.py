"""What a slide deck becomes between reading the PPTX and writing Typst, plus the import's bounds.

Every length is in points (1/72 inch), measured from the slide's top-left corner.
"""

from dataclasses import asdict, dataclass, field, fields

EMU_PER_POINT = 12700


@dataclass(frozen=True)
class ImportBounds:
    """The PPTX import's own limits; exceeding one is a ``resource_limit`` failure, never a hang."""

    max_slides: int = 1000
    max_shapes_per_slide: int = 2000
    max_group_depth: int = 16
    max_package_entries: int = 10_000
    max_expanded_bytes: int = 512 * 1024**2
    max_compression_ratio: int = 200  # for entries past 8 MiB; deflated XML and media stay far below
    max_picture_bytes: int = 32 * 1024**2
    max_picture_pixels: int = 50_000_000
    max_total_picture_bytes: int = 256 * 1024**2
    max_main_typ_bytes: int = 2 * 1024**2  # Workspace's default limit for one text file

    def to_settings(self) -> dict:
        return asdict(self)

    @classmethod
    def from_settings(cls, settings: dict) -> "ImportBounds":
        known = {item.name for item in fields(cls)}
        return cls(**{name: int(value) for name, value in settings.items() if name in known})


@dataclass(frozen=True)
class Frame:
    x: float
    y: float
    width: float
    height: float
    rotation: float = 0.0  # degrees, clockwise, about the frame's centre


@dataclass(frozen=True)
class Run:
    text: str
    bold: bool = False
    italic: bool = False
    underline: bool = False
    link: str | None = None
    size: float | None = None  # points
    color: str | None = None  # "rrggbb"
    font: str | None = None  # a family the build has (fonts.FontMapper); None: the page's
    line_break: bool = False  # a break inside the paragraph; ``text`` is empty


@dataclass(frozen=True)
class Paragraph:
    runs: tuple[Run, ...]
    level: int = 0
    bullet: str | None = None  # "bullet", "number" or None
    align: str | None = None  # "left", "center", "right", "justify"

    @property
    def text(self) -> str:
        return "".join("\n" if run.line_break else run.text for run in self.runs)


@dataclass(frozen=True)
class TextBlock:
    frame: Frame
    paragraphs: tuple[Paragraph, ...]
    role: str  # "title", "subtitle", "body" or "text"
    anchor: str = "top"  # vertical alignment in the frame: "top", "horizon" or "bottom"
    insets: tuple[float, float, float, float] = (7.2, 3.6, 7.2, 3.6)  # left, top, right, bottom
    spacing_scale: float = 1.0  # an autofit's line spacing reduction, as a factor


@dataclass(frozen=True)
class TableCell:
    paragraphs: tuple[Paragraph, ...]
    colspan: int = 1
    rowspan: int = 1


@dataclass(frozen=True)
class TableBlock:
    frame: Frame
    column_widths: tuple[float, ...]
    row_heights: tuple[float, ...]  # PowerPoint's heights, which are minimums that already fit the text
    rows: tuple[tuple[TableCell, ...], ...]  # spanned-over cells are left out
    header: bool


@dataclass(frozen=True)
class PictureBlock:
    frame: Frame
    asset_path: str
    crop: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # left, top, right, bottom fractions
    description: str = ""


@dataclass(frozen=True)
class FilledShape:
    frame: Frame
    fill: str | None  # "rrggbb"; None: outline only
    ellipse: bool = False
    outline: str | None = None  # "rrggbb"
    outline_width: float = 0.75  # points


Block = TextBlock | TableBlock | PictureBlock | FilledShape


@dataclass(frozen=True)
class Slide:
    number: int
    title: str
    blocks: tuple[Block, ...]
    notes: str = ""
    hidden: bool = False
    fill: str | None = None  # the slide's own solid background colour, "rrggbb"
    background_path: str | None = None  # the faithful profile's rendering of what was not converted


@dataclass(frozen=True)
class Deck:
    width: float
    height: float
    slides: tuple[Slide, ...]


@dataclass
class ConversionReport:
    """What was approximated or dropped, slide by slide; becomes the report JSON."""

    items: list[dict] = field(default_factory=list)

    def approximated(self, kind: str, *, slide: int, shape: str, detail: str) -> None:
        self.items.append({"category": "approximated", "kind": kind, "slide": slide, "shape": shape, "detail": detail})

    def dropped(self, kind: str, *, slide: int, shape: str, detail: str) -> None:
        self.items.append({"category": "dropped", "kind": kind, "slide": slide, "shape": shape, "detail": detail})

    def counts(self, category: str) -> dict[str, int]:
        counted: dict[str, int] = {}
        for item in self.items:
            if item["category"] == category:
                counted[item["kind"]] = counted.get(item["kind"], 0) + 1
        return dict(sorted(counted.items()))

    def for_slide(self, number: int) -> list[dict]:
        return [item for item in self.items if item["slide"] == number]
