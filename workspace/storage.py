"""Where asset bytes live: a content-addressed store behind a small adapter.

The default keeps each blob at ``<root>/<aa>/<bb>/<sha256>`` on the local
filesystem, written to a temporary name and renamed, so a reader never sees a
partial file. Blobs are immutable and no request deletes one: the collector does
(workspace/collector.py), and a ``put`` of bytes already stored refreshes their
modification time, which is how the collector knows they are about to be used.
"""

import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from django.conf import settings


class AssetStorage(Protocol):
    def put(self, data: bytes) -> str: ...
    def read(self, sha256: str) -> bytes: ...
    def path_of(self, sha256: str) -> Path: ...
    def touch(self, sha256: str) -> bool: ...
    def exists(self, sha256: str) -> bool: ...
    def delete(self, sha256: str) -> None: ...
    def digests(self) -> Iterator[str]: ...
    def condemn(self, sha256: str) -> float | None: ...
    def reprieve(self, sha256: str) -> None: ...
    def execute(self, sha256: str) -> None: ...


class FilesystemAssetStorage:
    def __init__(self, root: Path):
        self.root = Path(root)

    def _path(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(char not in "0123456789abcdef" for char in sha256):
            raise ValueError("not a sha256 digest")
        return self.root / sha256[:2] / sha256[2:4] / sha256

    def put(self, data: bytes) -> str:
        digest = hashlib.sha256(data).hexdigest()
        target = self._path(digest)
        try:
            os.utime(target)  # stored already: now it is in use again, and the collector sees it so
            return digest
        except FileNotFoundError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return digest

    def read(self, sha256: str) -> bytes:
        return self._path(sha256).read_bytes()

    def path_of(self, sha256: str) -> Path:
        """Where the bytes are, for streaming them (they never change there, and go only with the collector)."""
        return self._path(sha256)

    def exists(self, sha256: str) -> bool:
        return self._path(sha256).exists()

    def touch(self, sha256: str) -> bool:
        """Mark stored bytes as about to be used again, as ``put`` of them would; False when they are gone."""
        try:
            os.utime(self._path(sha256))
        except FileNotFoundError:
            return False
        return True

    def delete(self, sha256: str) -> None:
        self._path(sha256).unlink(missing_ok=True)

    def digests(self) -> Iterator[str]:
        """Every stored digest (condemned ones and temporary files excluded)."""
        for path in self.root.glob("??/??/*"):
            if len(path.name) == 64:
                yield path.name

    def condemn(self, sha256: str) -> float | None:
        """Move the bytes aside, atomically (a ``put`` from now on writes them anew); the modification time they
        had, or None when they are gone already."""
        path = self._path(sha256)
        condemned = path.with_name(path.name + CONDEMNED)
        try:
            os.rename(path, condemned)
        except FileNotFoundError:
            return None
        return condemned.stat().st_mtime

    def reprieve(self, sha256: str) -> None:
        """Put condemned bytes back (unless a ``put`` has stored them again meanwhile)."""
        path = self._path(sha256)
        condemned = path.with_name(path.name + CONDEMNED)
        if path.exists():
            condemned.unlink(missing_ok=True)
        else:
            os.rename(condemned, path)

    def execute(self, sha256: str) -> None:
        path = self._path(sha256)
        path.with_name(path.name + CONDEMNED).unlink(missing_ok=True)


CONDEMNED = ".condemned"


def asset_storage() -> AssetStorage:
    return FilesystemAssetStorage(Path(settings.QUIRE_STORAGE_DIR) / "assets")
