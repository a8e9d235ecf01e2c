import unicodedata

import pytest

from workspace.exceptions import InvalidPath
from workspace.paths import path_is_text, path_normalize


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("main.tex", "main.tex"),
        ("chapters/intro.tex", "chapters/intro.tex"),
        ("figures/plot 1.png", "figures/plot 1.png"),
        (unicodedata.normalize("NFD", "résumé.tex"), unicodedata.normalize("NFC", "résumé.tex")),
        ("a" * 255, "a" * 255),
        ("/".join(["d" * 200] * 5), "/".join(["d" * 200] * 5)),  # 1,004 bytes
        ("...tex", "...tex"),
    ],
)
def test_accepted_paths_are_normalised(raw, expected):
    assert path_normalize(raw) == expected


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ("", "empty"),
        ("/etc/passwd", "absolute"),
        ("../secret.tex", "segment"),
        ("chapters/../../secret.tex", "segment"),
        ("chapters/./intro.tex", "segment"),
        ("chapters//intro.tex", "segment"),
        ("chapters/", "segment"),
        ("a\x00b.tex", "control_character"),
        ("line\nbreak.tex", "control_character"),
        ("tab\there.tex", "control_character"),
        ("del\x7f.tex", "control_character"),
        ("windows\\style.tex", "backslash"),
        ("a" * 256, "segment_length"),
        ("é" * 128, "segment_length"),  # 256 bytes in UTF-8
        ("/".join(["d" * 200] * 6), "path_length"),
        ("bad\udcff.tex", "invalid_unicode"),
        ("evil\u202etxt.tex", "invisible_character"),  # shows as "evilxet.txt"
        ("zero\u200bwidth.tex", "invisible_character"),
        ("joined\u200dname.tex", "invisible_character"),
        ("bom\ufeff.tex", "invisible_character"),
        ("line\u2028separator.tex", "invisible_character"),
        ("paragraph\u2029separator.tex", "invisible_character"),
    ],
)
def test_rejected_paths_name_the_rule(raw, rule):
    with pytest.raises(InvalidPath) as caught:
        path_normalize(raw)
    assert caught.value.details["rule"] == rule
    assert caught.value.code == "invalid_path"


def test_nfc_and_nfd_spellings_name_the_same_path():
    assert path_normalize(unicodedata.normalize("NFD", "Ångström.tex")) == path_normalize("Ångström.tex")


@pytest.mark.parametrize(
    ("path", "is_text"),
    [("main.tex", True), ("refs.bib", True), ("main.typ", True), ("fig.png", False), ("README", False)],
)
def test_kind_follows_extension(path, is_text):
    assert path_is_text(path) is is_text
