"""Text files that are not UTF-8: which encoding they are in, and how they become UTF-8.

Older LaTeX sources (TeX Live's own documentation among them) are Latin-1, Windows-1252, KOI8-R or Shift-JIS,
declared with ``\\usepackage[latin1]{inputenc}`` or not at all. Quire keeps such a file byte for byte, so it
builds as it did on its author's machine, and names its encoding so it can be shown and converted.

The encoding is the one the file declares, when it decodes under it; otherwise charset-normalizer's guess,
preferring among equally plausible ones the encodings TeX sources are written in (on a short sample it ranks
Windows-1250 over Windows-1252 for German, where both read the same).
"""

import codecs
import re

from charset_normalizer import from_bytes

# inputenc's option names (and the names of `% !TEX encoding = …`) for Python's codecs.
TEX_ENCODINGS = {
    "latin1": "latin_1",
    "iso-8859-1": "latin_1",
    "latin2": "iso8859_2",
    "iso-8859-2": "iso8859_2",
    "latin3": "iso8859_3",
    "latin4": "iso8859_4",
    "latin5": "iso8859_9",
    "latin9": "iso8859_15",
    "iso-8859-15": "iso8859_15",
    "latin10": "iso8859_16",
    "ansinew": "cp1252",
    "cp1252": "cp1252",
    "windows-1252": "cp1252",
    "cp1250": "cp1250",
    "windows-1250": "cp1250",
    "cp1251": "cp1251",
    "windows-1251": "cp1251",
    "cp1257": "cp1257",
    "koi8-r": "koi8_r",
    "koi8-u": "koi8_u",
    "cp866": "cp866",
    "cp850": "cp850",
    "cp852": "cp852",
    "cp437": "cp437",
    "applemac": "mac_roman",
    "macintosh": "mac_roman",
    "shift_jis": "shift_jis",
    "shift-jis": "shift_jis",
    "sjis": "shift_jis",
    "euc-jp": "euc_jp",
    "gbk": "gbk",
    "gb2312": "gb2312",
    "big5": "big5",
}
# Among guesses that read the text equally well, the first of these wins.
PREFERRED = (
    "cp1252",
    "latin_1",
    "iso8859_15",
    "cp1250",
    "iso8859_2",
    "koi8_r",
    "cp1251",
    "cp866",
    "cp932",
    "shift_jis",
    "euc_jp",
    "gb18030",
    "gbk",
    "big5",
    "euc_kr",
    "utf_16",
)
CHAOS_SLACK = 0.05
COHERENCE_SLACK = 0.1

INPUTENC = re.compile(rb"\\usepackage\s*\[([^\]]*)\]\s*\{inputenc\}")
INPUTENCODING = re.compile(rb"\\inputencoding\s*\{([^}]*)\}")
MAGIC_COMMENT = re.compile(rb"^%\s*!TEX\s+encoding\s*=\s*([^\r\n]+)", re.IGNORECASE | re.MULTILINE)


def _codec(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _declared(data: bytes) -> str | None:
    """The encoding the file names for itself, if it names one Python knows."""
    names = [match.group(1) for match in MAGIC_COMMENT.finditer(data)]
    for match in INPUTENC.finditer(data):
        names += match.group(1).split(b",")
    names += [match.group(1) for match in INPUTENCODING.finditer(data)]
    for raw in names:
        name = raw.decode("ascii", errors="ignore").strip().lower()
        codec = TEX_ENCODINGS.get(name) or (_codec(name) if name else None)
        if codec and codec != "utf-8":
            return _codec(codec)
    return None


def _decodes(data: bytes, encoding: str) -> bool:
    try:
        data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return False
    return True


def legacy_encoding_of(data: bytes) -> str | None:
    """The encoding of text that is not UTF-8, or None when it does not read as text in any (a binary file)."""
    declared = _declared(data)
    if declared and _decodes(data, declared):
        return declared
    results = list(from_bytes(data))
    if not results:
        return None
    best = results[0]
    plausible = {
        _codec(name)
        for result in results
        if result.chaos <= best.chaos + CHAOS_SLACK and result.coherence >= best.coherence - COHERENCE_SLACK
        for name in (result.encoding, *result.could_be_from_charset)
    }
    for name in PREFERRED:
        codec = _codec(name)
        if codec in plausible and _decodes(data, codec):
            return codec
    return _codec(best.encoding)


def utf8_converted(data: bytes, encoding: str) -> str:
    """The file's text, with any declaration of its old encoding now declaring UTF-8."""
    text = data.decode(encoding)
    text = re.sub(r"^(%\s*!TEX\s+encoding\s*=\s*)[^\r\n]+", r"\1UTF-8", text, flags=re.IGNORECASE | re.MULTILINE)
    text = re.sub(r"(\\inputencoding\s*\{)[^}]*(\})", r"\1utf8\2", text)
    return re.sub(r"(\\usepackage\s*\[)([^\]]*)(\]\s*\{inputenc\})", _inputenc_utf8, text)


def _inputenc_utf8(match: re.Match) -> str:
    options = [option.strip() for option in match.group(2).split(",")]
    kept = [option for option in options if option and option.lower() not in TEX_ENCODINGS and option != "utf8"]
    return f"{match.group(1)}{','.join(['utf8', *kept])}{match.group(3)}"


def encoding_label(encoding: str) -> str:
    """How people name it: ``cp1252`` → ``Windows-1252``."""
    labels = {
        "cp1252": "Windows-1252",
        "cp1250": "Windows-1250",
        "cp1251": "Windows-1251",
        "cp1257": "Windows-1257",
        "iso8859-1": "ISO-8859-1 (Latin-1)",
        "iso8859-15": "ISO-8859-15 (Latin-9)",
        "iso8859-2": "ISO-8859-2 (Latin-2)",
        "koi8-r": "KOI8-R",
        "koi8-u": "KOI8-U",
        "shift_jis": "Shift-JIS",
        "cp932": "Shift-JIS (Windows)",
        "euc_jp": "EUC-JP",
        "utf-16": "UTF-16",
        "mac-roman": "Mac Roman",
    }
    return labels.get(encoding, encoding.upper())


def legacy_encoded(files) -> list[dict]:
    """The files of ``files`` kept in another encoding, as an answer lists them: path, encoding, its name."""
    return [
        {"path": file.path, "encoding": file.encoding, "label": encoding_label(file.encoding)}
        for file in files
        if file.encoding
    ]
