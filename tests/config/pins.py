"""Digests of the framework internals that config/'s hand-written replacements copy or lean on.

A replacement of a framework internal is written against one version of it. These digests are of the
internals' source as installed when it was written; a test comparing them fails on an upgrade that changes
one, which is the moment to read the new source beside ours and either update ours (and the digest) or drop
ours for the stock component.
"""

import hashlib
import inspect


def source_digest(obj) -> str:
    """The first 16 hex digits of the sha256 of ``obj``'s source."""
    return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()[:16]


def changed(pinned: dict[str, tuple[object, str]]) -> dict[str, str]:
    """The names among ``pinned`` (name → (object, digest)) whose source no longer has its digest."""
    return {name: source_digest(obj) for name, (obj, digest) in pinned.items() if source_digest(obj) != digest}
