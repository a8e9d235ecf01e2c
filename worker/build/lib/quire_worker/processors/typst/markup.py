"""Writing untrusted text into Typst source so that it reads back as exactly that text.

Typst markup gives meaning to many characters (``#`` code, ``*`` strong, ``_`` emphasis,
``$`` math, ``@`` references, ``<`` labels, backticks raw, ``[``/``]`` content, ``\\``
escapes, ``~`` non-breaking space, ``//`` and ``/*`` comments) and to some line starts
(``=`` headings, ``-``/``+`` lists, ``/`` term lists, ``1.`` numbered lists). A backslash
before any character makes it literal, so escaping is always safe; we escape only where
needed to keep the imported source pleasant to edit.
"""

import re

_ALWAYS_ESCAPED = frozenset("\\#*_$@<>[]`~")
_LINE_START_MARKERS = frozenset("=-+/")
_NUMBERED_LINE_START = re.compile(r"\d+\.")
# Characters that would continue an embedded expression such as ``#strong[x]`` if they came next.
_EXPRESSION_CONTINUATIONS = frozenset(".([")
_CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def escape_text(text: str, *, at_line_start: bool = False) -> str:
    """Return ``text`` as Typst markup that renders literally; newlines become spaces.

    ``at_line_start`` drops leading spaces (Typst would) and escapes a first character
    that would start a heading or list there.
    """
    text = _CONTROL_CHARACTERS.sub("", " ".join(text.splitlines()))
    if at_line_start:
        text = text.lstrip()
    escaped = []
    for index, char in enumerate(text):
        following = text[index + 1 : index + 2]
        previous = text[index - 1 : index] if index else ""
        if char in _ALWAYS_ESCAPED or _starts_comment_or_dash(char, previous, following):
            escaped.append("\\" + char)
        else:
            escaped.append(char)
    if at_line_start and escaped and not escaped[0].startswith("\\") and _needs_line_start_escape(text):
        escaped[0] = "\\" + escaped[0]
    return "".join(escaped)


def _starts_comment_or_dash(char: str, previous: str, following: str) -> bool:
    if char == "/":
        return following in ("/", "*") or previous == "/"
    if char == "-":
        return following in ("-", "?") or previous == "-"
    return False


def _needs_line_start_escape(text: str) -> bool:
    return text[0] in _LINE_START_MARKERS or bool(_NUMBERED_LINE_START.match(text))


def continues_expression(next_markup: str) -> bool:
    """Whether markup placed right after ``#func[...]`` would be read as part of that call."""
    return bool(next_markup) and next_markup[0] in _EXPRESSION_CONTINUATIONS


def string_literal(value: str) -> str:
    """A Typst string literal (code mode) holding ``value``."""
    value = _CONTROL_CHARACTERS.sub("", value)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def line_comment(text: str, *, prefix: str = "// ") -> list[str]:
    """``text`` as Typst line comments, one per line; nothing in it can end the comment early."""
    lines = _CONTROL_CHARACTERS.sub("", text).splitlines() or [""]
    return [f"{prefix}{line}".rstrip() for line in lines]


def points(value: float) -> str:
    """A length in points, rounded to a hundredth, without float noise (``12.5pt``, ``0pt``)."""
    digits = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0pt" if digits in ("", "-0") else f"{digits}pt"
