"""Request parsers that cannot be turned into a 500 by their input."""

import json
import re

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from foundation.text_rules import TextNotStorable, text_storable

MAX_JSON_DEPTH = 32
MAX_JSON_BYTES = 1024 * 1024


def json_depth_exceeds(raw: bytes, limit: int) -> bool:
    """Whether arrays/objects nest deeper than ``limit``, found without recursion.

    ``json.loads`` recurses per nesting level, so a 20,000-deep document raises
    ``RecursionError``; this scan runs first and costs one pass over the bytes.
    """
    depth = 0
    in_string = False
    escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    result: dict = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


# The escapes that can put a NUL or a lone surrogate into a decoded string (raw ones are not valid JSON or UTF-8).
_SUSPECT_ESCAPE = re.compile(rb"\\u(0000|[dD][89a-fA-F])")


def _strings_storable(value) -> bool:
    if isinstance(value, str):
        return text_storable(value)
    if isinstance(value, dict):
        return all(_strings_storable(key) and _strings_storable(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_strings_storable(item) for item in value)
    return True


def loads_strict(raw: bytes) -> object:
    """Parse JSON with a depth limit, no NaN/Infinity and no duplicate keys; raise ParseError. A string
    holding NUL or a lone surrogate is refused too (TextNotStorable, foundation/text_rules.py)."""
    if len(raw) > MAX_JSON_BYTES:
        raise ParseError("The JSON body is too large.")
    if json_depth_exceeds(raw, MAX_JSON_DEPTH):
        raise ParseError(f"JSON nests deeper than {MAX_JSON_DEPTH} levels.")
    try:
        text = raw.decode("utf-8")
        parsed = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_reject_duplicate_keys)
    except UnicodeDecodeError as exc:
        raise ParseError("The JSON body is not UTF-8.") from exc
    except ValueError as exc:  # JSONDecodeError is a ValueError
        raise ParseError(f"Malformed JSON: {exc}") from exc
    if _SUSPECT_ESCAPE.search(raw) and not _strings_storable(parsed):
        raise TextNotStorable(details={"where": "json"})
    return parsed


class BoundedJSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read(MAX_JSON_BYTES + 1) if stream is not None else b""
        if not raw:
            return {}
        return loads_strict(raw)


class RawBodyParser(BaseParser):
    """Accepts any media type and hands the view the undecoded bytes (the view enforces its limit)."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""
