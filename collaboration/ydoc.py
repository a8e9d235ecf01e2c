"""Yjs documents as Quire uses them: one shared ``Text`` named ``content`` per text document.

pycrdt indexes text by UTF-8 byte offset, so edits computed on Python strings
are converted to byte offsets before they touch the ``Text``.
"""

import difflib

from pycrdt import Doc, Text, get_update

from collaboration.exceptions import InvalidUpdate

ROOT = "content"


def doc_build(snapshot: bytes, updates: list[bytes], *, client_id: int | None = None) -> Doc:
    doc = Doc(client_id=client_id)
    doc[ROOT] = Text()
    if snapshot:
        doc.apply_update(snapshot)
    for update in updates:
        doc.apply_update(update)
    return doc


def doc_text(doc: Doc) -> str:
    return str(doc[ROOT])


def update_apply_strict(doc: Doc, update: bytes) -> None:
    """Apply a client's update; refuse one that does not decode, leaves structs pending or adds roots.

    After applying, the part of the update the document still lacks is what
    Yjs parked as pending (its dependencies are unknown here); an update v1
    starts with the var-uint count of its struct groups, so a first byte other
    than 0 means something did not integrate.
    """
    try:
        doc.apply_update(update)
        not_integrated = get_update(update, doc.get_state())
    except ValueError as exc:
        raise InvalidUpdate(details={"reason": str(exc)[:200]}) from exc
    if not_integrated[:1] != b"\x00":
        raise InvalidUpdate("The update depends on changes this server has not accepted.")
    if set(doc.keys()) != {ROOT}:
        raise InvalidUpdate(f"Only the shared text {ROOT!r} may be edited.")


def text_replace(doc: Doc, new_text: str) -> bytes | None:
    """Edit the document's text into ``new_text`` with minimal inserts/deletes; return the update, if any."""
    text: Text = doc[ROOT]
    old_text = str(text)
    if old_text == new_text:
        return None
    before = doc.get_state()
    byte_offsets = _byte_offsets(old_text)
    operations = _edit_operations(old_text, new_text)
    with doc.transaction():
        for tag, old_start, old_end, new_start, new_end in reversed(operations):
            if tag == "equal":
                continue
            start, end = byte_offsets[old_start], byte_offsets[old_end]
            if end > start:
                del text[start:end]
            if new_end > new_start:
                text.insert(start, new_text[new_start:new_end])
    return doc.get_update(before)


# SequenceMatcher is quadratic and runs while the project fence is held: a changed middle of
# 2,000 characters costs about 0.3 s at worst here, 20,000 would cost tens of seconds. Larger
# changes become one replacement, which converges just as well with less granular history.
FINE_DIFF_LIMIT = 2_000


def _edit_operations(old: str, new: str) -> list[tuple[str, int, int, int, int]]:
    """Opcodes turning ``old`` into ``new``: exact common prefix/suffix, a fine diff of a small middle.

    A character diff is quadratic at worst, so a large changed middle becomes one replacement.
    """
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    old_mid, new_mid = old[prefix : len(old) - suffix], new[prefix : len(new) - suffix]
    if max(len(old_mid), len(new_mid)) > FINE_DIFF_LIMIT:
        return [("replace", prefix, len(old) - suffix, prefix, len(new) - suffix)]
    matcher = difflib.SequenceMatcher(a=old_mid, b=new_mid, autojunk=False)
    return [(tag, a0 + prefix, a1 + prefix, b0 + prefix, b1 + prefix) for tag, a0, a1, b0, b1 in matcher.get_opcodes()]


def _byte_offsets(text: str) -> list[int]:
    offsets = [0]
    for char in text:
        offsets.append(offsets[-1] + len(char.encode("utf-8")))
    return offsets
