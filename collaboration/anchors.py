"""Anchors: a stretch of a document's text held by two Yjs relative positions, so it follows its text through
every edit before, inside or after it, and the editor resolves the same bytes with its own Yjs
(``Y.decodeRelativePosition``).

A relative position names a character by its Yjs id (client, clock), never by its index. The start names the
stretch's first character (``assoc`` 0: the index *of* it), the end its last (``assoc`` -1: the index *after*
it). Once every character of the stretch is deleted the two meet, and the stretch is gone.

pycrdt's own ``StickyIndex`` cannot be used for this yet: with the byte offsets pycrdt's ``Text`` uses, it mixes
byte and UTF-16 units and lands on the wrong character once text holds anything but ASCII
(y-crdt/pycrdt#382; ``tests/collaboration/test_comment_anchors.py`` keeps an eye on it). So the ids are found
with Yjs itself, on a throwaway copy of the document: a character's id is the *origin* Yjs gives a character
typed right after it, and where an id is now is where a character typed right after it lands. The two small
encodings that takes (a relative position; an update of one-character insertions) are Yjs's v1 formats, as
``lib0``'s ``encoding`` writes them.

Offsets here are Unicode code points (Python's ``str`` indices).
"""

from dataclasses import dataclass

from pycrdt import Doc, Snapshot, Text

from collaboration.live.protocol import Reader, var_string, var_uint
from collaboration.ydoc import ROOT

ITEM, STRING_CONTENT, HAS_ORIGIN, HAS_RIGHT_ORIGIN = 0, 4, 0x80, 0x40
MARKERS = range(0xE000, 0xF900)  # private-use characters, one per position being looked for
MARKER_CLIENT = 0  # a Yjs client that wins every tie, so its character lands right after its origin


@dataclass(frozen=True)
class Anchor:
    start: bytes
    end: bytes


def anchor_make(doc: Doc, start: int, end: int) -> Anchor:
    """The anchor of characters ``start``..``end`` (code points, ``0 <= start < end <= len``)."""
    first, last = _ids_of(doc, [start, end - 1])
    return Anchor(_relative_position(first, assoc=0), _relative_position(last, assoc=-1))


def anchors_resolve(doc: Doc, anchors: list[Anchor]) -> list[tuple[int, int] | None]:
    """Where each anchored stretch is now (code points), ``None`` for one whose text is deleted."""
    if not anchors:
        return []
    ids = [(_id_of_relative_position(anchor.start), _id_of_relative_position(anchor.end)) for anchor in anchors]
    after = _positions_after(doc, [identifier for pair in ids for identifier in pair])
    deleted = _deleted_ranges(doc)
    resolved = []
    for index, (first, _) in enumerate(ids):
        start = after[2 * index] - (0 if _is_deleted(first, deleted) else 1)
        end = after[2 * index + 1]
        resolved.append((start, end) if end > start else None)
    return resolved


def _ids_of(doc: Doc, indices: list[int]) -> list[tuple[int, int]]:
    """The Yjs id of the character at each index: the origin of a character typed right after it."""
    copy = _copy(doc)
    text, content = copy[ROOT], str(copy[ROOT])
    before = copy.get_state()
    markers = _markers(content, len(indices))
    with copy.transaction():  # from the last index down, so earlier insertions do not move later ones
        for order in sorted(range(len(indices)), key=lambda position: -indices[position]):
            text.insert(len(content[: indices[order] + 1].encode("utf-8")), markers[order])
    origins = {marker: origin for marker, origin in _inserted_items(copy.get_update(before))}
    return [origins[marker] for marker in markers]


def _positions_after(doc: Doc, ids: list[tuple[int, int]]) -> list[int]:
    """For each id, the index right after that character (where it would be if it is deleted)."""
    copy = _copy(doc)
    markers = _markers(str(copy[ROOT]), len(ids))
    clock = _state_vector(copy).get(MARKER_CLIENT, 0)
    copy.apply_update(_insertions_update(MARKER_CLIENT, clock, list(zip(ids, markers, strict=True))))
    index_of, seen = {}, 0
    wanted = set(markers)
    for char in str(copy[ROOT]):
        if char in wanted:
            index_of[char] = seen
        else:
            seen += 1
    return [index_of[marker] for marker in markers]


def _copy(doc: Doc) -> Doc:
    copy = Doc()
    copy[ROOT] = Text()
    copy.apply_update(doc.get_update())
    return copy


def _markers(content: str, count: int) -> list[str]:
    present = set(content)
    free = [chr(code) for code in MARKERS if chr(code) not in present]
    if len(free) < count:
        raise ValueError("too many positions looked up at once")
    return free[:count]


# --- Yjs v1 encodings (lib0's var-uint and var-int) -------------------------------------------------------


def _relative_position(identifier: tuple[int, int], *, assoc: int) -> bytes:
    client, clock = identifier
    return var_uint(ITEM) + var_uint(client) + var_uint(clock) + _int(assoc)


def _id_of_relative_position(data: bytes) -> tuple[int, int]:
    reader = Reader(data)
    if reader.var_uint() != ITEM:
        raise ValueError("not a relative position of a character")
    return reader.var_uint(), reader.var_uint()


def _insertions_update(client: int, clock: int, insertions: list[tuple[tuple[int, int], str]]) -> bytes:
    """An update in which ``client`` types each one-character string right after the character with that id."""
    parts = [var_uint(1), var_uint(len(insertions)), var_uint(client), var_uint(clock)]
    for (origin_client, origin_clock), char in insertions:
        parts += [bytes([HAS_ORIGIN | STRING_CONTENT]), var_uint(origin_client), var_uint(origin_clock)]
        parts.append(var_string(char))
    return b"".join(parts) + var_uint(0)  # no deletions


def _inserted_items(update: bytes) -> list[tuple[str, tuple[int, int]]]:
    """(text, origin) of each string item of an update that only inserts text with an origin."""
    reader, items = Reader(update), []
    for _ in range(reader.var_uint()):
        structs, _client, _clock = reader.var_uint(), reader.var_uint(), reader.var_uint()
        for _ in range(structs):
            info = reader.uint8()
            if info & 0x1F != STRING_CONTENT or not info & HAS_ORIGIN:
                raise ValueError("unexpected struct in a probe's update")
            origin = (reader.var_uint(), reader.var_uint())
            if info & HAS_RIGHT_ORIGIN:
                reader.var_uint(), reader.var_uint()
            items.append((reader.var_string(), origin))
    return items


def _deleted_ranges(doc: Doc) -> dict[int, list[tuple[int, int]]]:
    """The document's delete set, from its snapshot (a delete set, then a state vector)."""
    reader, ranges = Reader(Snapshot.from_doc(doc).encode()), {}
    for _ in range(reader.var_uint()):
        client = reader.var_uint()
        ranges[client] = [(reader.var_uint(), reader.var_uint()) for _ in range(reader.var_uint())]
    return ranges


def _is_deleted(identifier: tuple[int, int], deleted: dict[int, list[tuple[int, int]]]) -> bool:
    client, clock = identifier
    return any(start <= clock < start + length for start, length in deleted.get(client, ()))


def _state_vector(doc: Doc) -> dict[int, int]:
    reader = Reader(doc.get_state())
    return {reader.var_uint(): reader.var_uint() for _ in range(reader.var_uint())}


def _int(value: int) -> bytes:
    magnitude = abs(value)
    out = bytearray([(0x80 if magnitude > 0x3F else 0) | (0x40 if value < 0 else 0) | (magnitude & 0x3F)])
    magnitude >>= 6
    while magnitude > 0:
        out.append((0x80 if magnitude > 0x7F else 0) | (magnitude & 0x7F))
        magnitude >>= 7
    return bytes(out)
