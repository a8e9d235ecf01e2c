"""``If-Match`` as Quire's APIs use it: one strong entity tag holding a version number, like ``"7"``.

Files (their ``version``) and library documents (their ``revision``) are both served with such an
``ETag``; a conditional write sends it back and is refused with 412 when the resource moved on.
"""

import re

from foundation.errors import QuireError

_STRONG_NUMBER = re.compile(r'^"([0-9]{1,18})"$')


class IfMatchInvalid(QuireError):
    """If-Match must be one strong entity tag holding a version number, like "7"."""

    code = "if_match_invalid"


def if_match_number(raw: str | None) -> int | None:
    """The number an ``If-Match`` header names, ``None`` when there is none; raises ``IfMatchInvalid``."""
    if raw is None or not raw.strip():
        return None
    match = _STRONG_NUMBER.match(raw.strip())
    if match is None:
        raise IfMatchInvalid(details={"if_match": raw[:100]})
    return int(match.group(1))
