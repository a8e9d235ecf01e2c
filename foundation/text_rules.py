"""One rule for text that reaches the database: PostgreSQL's ``text`` holds neither U+0000 nor a lone
surrogate (a str Python decoded from ``\\ud800`` in JSON cannot even be encoded to UTF-8).

Applied where input enters. Text a person sends (a document, a JSON field, a URL's path or query) holding
either is refused, ``400 invalid_text``: a NUL in a URL's path or query by the first middleware
(config/http/middleware.py), such strings in JSON by the parser (foundation/http/parsers.py), a text document's
bytes by Workspace. An upload's file name goes through ``unstorable_dropped``.
Text that comes from inside a file (a PDF's metadata title) is metadata: the characters are dropped.
"""

from foundation.errors import QuireError
from quire_wire.text import UNSTORABLE as _UNSTORABLE


class TextNotStorable(QuireError):
    """Text may not contain the NUL character (U+0000) or an unpaired surrogate."""

    code = "invalid_text"


def text_storable(value: str) -> bool:
    return _UNSTORABLE.search(value) is None


def unstorable_dropped(value: str) -> str:
    return _UNSTORABLE.sub("", value)
