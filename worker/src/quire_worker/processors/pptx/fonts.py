"""A deck's fonts mapped to fonts its Typst build has, and the font files copied into the imported project.

A Quire Typst build sees only Typst's embedded fonts and the project's own files (no system fonts), so a
substitute reaches the build as files in ``fonts/``. Office's own fonts get their free metric-compatible twins
(Carlito for Calibri, Caladea for Cambria, Liberation for Arial, Times New Roman and Courier New), so lines
break where they broke; any other family gets the Liberation font of its kind. East Asian text gets Droid
Sans Fallback, which has CJK glyphs; Symbol's and Wingdings' private-use characters become the Unicode
characters they draw. Every substitution is in the import's report; where the worker has no file of a
substitute, the build falls back to Typst's default font and the report says so.
"""

from dataclasses import dataclass, field
from pathlib import Path

FONT_DIRECTORY = "fonts"
SYSTEM_FONTS = Path("/usr/share/fonts")
_STYLES = ("Regular", "Bold", "Italic", "BoldItalic")
# family: (file stem, whether metric-compatible with what it replaces)
_FILES = {
    "Carlito": "Carlito",
    "Caladea": "Caladea",
    "Liberation Sans": "LiberationSans",
    "Liberation Serif": "LiberationSerif",
    "Liberation Mono": "LiberationMono",
}
_TWINS = {
    "calibri": "Carlito",
    "calibri light": "Carlito",
    "cambria": "Caladea",
    "arial": "Liberation Sans",
    "helvetica": "Liberation Sans",
    "liberation sans": "Liberation Sans",
    "times new roman": "Liberation Serif",
    "times": "Liberation Serif",
    "liberation serif": "Liberation Serif",
    "courier new": "Liberation Mono",
    "courier": "Liberation Mono",
    "liberation mono": "Liberation Mono",
    "carlito": "Carlito",
    "caladea": "Caladea",
}
_SERIF = ("georgia", "garamond", "palatino", "book antiqua", "century schoolbook", "constantia", "baskerville",
          "bookman", "cambria math", "sitka", "minion", "serif")  # fmt: skip
_MONO = ("consolas", "lucida console", "menlo", "monaco", "source code", "mono", "andale")
EAST_ASIAN_FAMILY = "Droid Sans Fallback"
_EAST_ASIAN_FILE = "DroidSansFallbackFull.ttf"
# Symbol's private-use code points (U+F0xx: the font's own encoding) for the letters slides use most.
_SYMBOL = dict(zip(range(0xF061, 0xF07B), "αβχδεφγηιϕκλμνοπθρστυϖωξψζ", strict=True)) | dict(
    zip(range(0xF041, 0xF05B), "ΑΒΧΔΕΦΓΗΙϑΚΛΜΝΟΠΘΡΣΤΥςΩΞΨΖ", strict=True)
) | {0xF0B7: "•", 0xF0AE: "→", 0xF0AC: "←", 0xF0B1: "±", 0xF0B4: "×", 0xF0B8: "÷", 0xF0A3: "≤", 0xF0B3: "≥",
     0xF0B9: "≠", 0xF0BB: "≈", 0xF0A5: "∞", 0xF0D6: "√", 0xF0E5: "∑", 0xF0F2: "∫", 0xF0B6: "∂"}  # fmt: skip
_WINGDINGS = {0xF0A7: "▪", 0xF0A8: "◻", 0xF06C: "●", 0xF06E: "■", 0xF071: "❑", 0xF076: "❖", 0xF0D8: "➢",
              0xF0E0: "➔", 0xF0FC: "✓", 0xF0FB: "✗", 0xF0FE: "☑", 0xF0A1: "○", 0xF09F: "•"}  # fmt: skip
_SYMBOL_FONTS = {"symbol": _SYMBOL, "wingdings": _WINGDINGS}


@dataclass
class FontMapper:
    """Maps each family the deck names once, remembering what the report and the project need."""

    font_root: Path = SYSTEM_FONTS
    substitutions: dict[str, str] = field(default_factory=dict)  # deck family → what the report says
    used: set[str] = field(default_factory=set)  # substitutes whose files go into the project
    _found: dict[str, list[Path]] = field(default_factory=dict)

    def family(self, name: str) -> str | None:
        """The family the build uses for ``name``, or None for Typst's default."""
        name = name.strip()
        if not name:
            return None
        key = name.lower()
        substitute = _TWINS.get(key) or _kind_of(key)
        if key in _SYMBOL_FONTS:
            self.substitutions.setdefault(name, f"{name} → Unicode characters in the surrounding font")
            return None
        if not self._files(substitute):
            self.substitutions.setdefault(name, f"{name} → Typst's default font (no {substitute} on the worker)")
            return None
        if substitute.lower() != key:
            how = "metric-compatible" if key in _TWINS else "the nearest free font of its kind"
            self.substitutions.setdefault(name, f"{name} → {substitute} ({how})")
        self.used.add(substitute)
        return substitute

    def east_asian(self, name: str) -> str | None:
        """The family for East Asian text (whatever ``name`` the deck gives it)."""
        if not self._files(EAST_ASIAN_FAMILY):
            self.substitutions.setdefault(name or "East Asian text", "East Asian text → no CJK font on the worker")
            return None
        self.substitutions.setdefault(name or "East Asian text", f"{name or 'East Asian text'} → {EAST_ASIAN_FAMILY}")
        self.used.add(EAST_ASIAN_FAMILY)
        return EAST_ASIAN_FAMILY

    def files(self) -> dict[str, bytes]:
        """``fonts/<file>`` → bytes of every substitute used."""
        return {
            f"{FONT_DIRECTORY}/{path.name}": path.read_bytes()
            for family in sorted(self.used)
            for path in self._files(family)
        }

    def _files(self, family: str) -> list[Path]:
        if family not in self._found:
            if family == EAST_ASIAN_FAMILY:
                names = [_EAST_ASIAN_FILE]
            else:
                names = [f"{_FILES[family]}-{style}.ttf" for style in _STYLES]
            found = [path for name in names for path in sorted(self.font_root.rglob(name))[:1]]
            self._found[family] = found if len(found) == len(names) else []
        return self._found[family]


def _kind_of(key: str) -> str:
    if any(word in key for word in _MONO):
        return "Liberation Mono"
    if any(word in key for word in _SERIF):
        return "Liberation Serif"
    return "Liberation Sans"


def symbol_text(text: str, family: str) -> str:
    """``text`` in a symbol font with its private-use characters as the Unicode ones they draw."""
    table = _SYMBOL_FONTS.get(family.strip().lower())
    if not table:
        return text
    return "".join(table.get(ord(char) if ord(char) >= 0xF000 else ord(char) + 0xF000, char) for char in text)


def is_symbol_font(family: str) -> bool:
    return family.strip().lower() in _SYMBOL_FONTS


def has_east_asian(text: str) -> bool:
    return any(
        0x2E80 <= ord(char) <= 0x9FFF or 0xAC00 <= ord(char) <= 0xD7AF or 0xF900 <= ord(char) <= 0xFAFF
        or 0xFF00 <= ord(char) <= 0xFFEF
        for char in text
    )  # fmt: skip
