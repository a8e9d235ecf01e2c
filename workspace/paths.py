"""The one rule for file paths inside a project.

A path is a relative POSIX path, NFC-normalised, whose segments are neither
empty, ``.`` nor ``..``; no control characters or NUL; no invisible format
characters or line and paragraph separators (Unicode categories Cf, Zl, Zp: a
right-to-left override or a zero-width space would let ``evil\u202etxt.tex``
show as another name); at most 255 bytes per segment and 1,024 bytes in all
(UTF-8). Normalising first means an NFD spelling of an existing path names the
same file.
"""

import posixpath
import unicodedata

from workspace.exceptions import InvalidPath

MAX_SEGMENT_BYTES = 255
MAX_PATH_BYTES = 1024
INVISIBLE_CATEGORIES = frozenset({"Cf", "Zl", "Zp"})

TEXT_EXTENSIONS = frozenset(
    {
        ".tex",
        ".ltx",
        ".typ",
        ".bib",
        ".bst",
        ".bbx",
        ".cbx",
        ".cls",
        ".sty",
        ".dtx",
        ".ins",
        ".def",
        ".cfg",
        ".clo",
        ".fd",
        ".txt",
        ".md",
        ".csv",
        ".tsv",
        ".json",
        ".toml",
        ".yaml",
        ".yml",
        ".lua",
    }
)


def is_control(char: str) -> bool:
    return ord(char) < 0x20 or ord(char) == 0x7F


def is_invisible(char: str) -> bool:
    """A format character or separator: shows as nothing, or reorders what follows (project names obey it too)."""
    return unicodedata.category(char) in INVISIBLE_CATEGORIES


def path_normalize(raw: str) -> str:
    """Return the canonical form of ``raw`` or raise ``InvalidPath`` naming the broken rule."""
    if not isinstance(raw, str) or raw == "":
        raise InvalidPath("A path must not be empty.", details={"rule": "empty"})
    if any(is_control(char) for char in raw):
        raise InvalidPath("A path must not contain control characters.", details={"rule": "control_character"})
    if any(is_invisible(char) for char in raw):
        raise InvalidPath(
            "A path must not contain invisible formatting characters (such as direction overrides or zero-width "
            "spaces) or line separators.",
            details={"rule": "invisible_character"},
        )
    if "\\" in raw:
        raise InvalidPath("Use '/' to separate folders.", details={"rule": "backslash"})
    if any(0xD800 <= ord(char) <= 0xDFFF for char in raw):
        raise InvalidPath("A path must be valid Unicode.", details={"rule": "invalid_unicode"})
    path = unicodedata.normalize("NFC", raw)
    if path.startswith("/"):
        raise InvalidPath("A path must be relative.", details={"rule": "absolute"})
    segments = path.split("/")
    for segment in segments:
        if segment in ("", ".", ".."):
            raise InvalidPath("A path must not contain empty, '.' or '..' segments.", details={"rule": "segment"})
        if len(segment.encode()) > MAX_SEGMENT_BYTES:
            raise InvalidPath("A path segment is longer than 255 bytes.", details={"rule": "segment_length"})
    if len(path.encode()) > MAX_PATH_BYTES:
        raise InvalidPath("A path is longer than 1,024 bytes.", details={"rule": "path_length"})
    return path


def path_is_text(path: str) -> bool:
    """Text documents are recognised by extension; everything else is a binary asset."""
    return posixpath.splitext(path)[1].lower() in TEXT_EXTENSIONS


def path_ancestors(path: str) -> list[str]:
    """``a/b/c.tex`` → ``["a", "a/b"]``: the folders a file implies."""
    segments = path.split("/")[:-1]
    return ["/".join(segments[: index + 1]) for index in range(len(segments))]
