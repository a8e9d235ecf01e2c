"""The host's two bounded memories: which content a source version holds, and ready PDFs.

Both are transient and per process. Neither authorizes anything: the host is
only asked after the caller's access to the source has been checked.
"""

import uuid
from collections import OrderedDict
from dataclasses import dataclass

type SourceKey = tuple[uuid.UUID, str, str]  # project, path, version (the file's sha256)
type Identity = tuple[str, str, int]  # sha256 of the bytes, extension, converter generation


class SourceIndex:
    """An LRU from an authorized source version to the digest of its bytes, bounded by entries."""

    def __init__(self, *, max_entries: int):
        self.max_entries = max_entries
        self._digests: OrderedDict[SourceKey, str] = OrderedDict()

    def __len__(self) -> int:
        return len(self._digests)

    def get(self, key: SourceKey) -> str | None:
        digest = self._digests.get(key)
        if digest is not None:
            self._digests.move_to_end(key)
        return digest

    def put(self, key: SourceKey, digest: str) -> None:
        self._digests[key] = digest
        self._digests.move_to_end(key)
        while len(self._digests) > self.max_entries:
            self._digests.popitem(last=False)


@dataclass(frozen=True)
class CachedPdf:
    pdf: bytes
    page_count: int


class PdfCache:
    """An LRU of ready PDFs bounded by entries and bytes; it keeps private buffers and hands out copies.

    A PDF larger than ``max_entry_bytes`` (or than the whole budget) is not retained.
    """

    def __init__(self, *, max_entries: int, max_bytes: int, max_entry_bytes: int):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.max_entry_bytes = min(max_entry_bytes, max_bytes)
        self._entries: OrderedDict[Identity, tuple[bytearray, int]] = OrderedDict()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, identity: Identity) -> CachedPdf | None:
        entry = self._entries.get(identity)
        if entry is None:
            return None
        self._entries.move_to_end(identity)
        buffer, page_count = entry
        return CachedPdf(bytes(buffer), page_count)

    def put(self, identity: Identity, pdf: bytes, page_count: int) -> bool:
        """Retain a copy of ``pdf``; returns False when it is too large to keep."""
        if len(pdf) > self.max_entry_bytes or self.max_entries < 1:
            return False
        self._discard(identity)
        self._entries[identity] = (bytearray(pdf), page_count)
        self.bytes += len(pdf)
        while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
            self._discard(next(iter(self._entries)))
        return True

    def _discard(self, identity: Identity) -> None:
        entry = self._entries.pop(identity, None)
        if entry is not None:
            self.bytes -= len(entry[0])
