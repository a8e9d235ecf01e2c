"""A processor's scratch directory, and reading back what a sandboxed build left in it.

During the build the sandbox owns everything below the area's root and may have replaced
any file or directory by a symbolic link to somewhere on the worker. Reading results
therefore walks from the root (which the sandbox cannot replace) with ``O_NOFOLLOW`` at every
step, and treats anything that is not a plain file or directory as absent.
"""

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from quire_worker.truncation import HeadTailBuffer

READ_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True)
class WorkArea:
    root: Path  # the only directory the sandbox may write
    sources: Path  # the project's files and the build's working directory: root/src
    home: Path  # HOME and private caches, outside the project tree: root/home


@contextlib.contextmanager
def work_area(*, next_to: Path) -> Iterator[WorkArea]:
    """A fresh area beside ``next_to`` (the job's output directory), removed afterwards."""
    root = Path(tempfile.mkdtemp(prefix="work-", dir=next_to.parent))
    try:
        area = WorkArea(root=root, sources=root / "src", home=root / "home")
        area.sources.mkdir()
        area.home.mkdir()
        yield area
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def opened_source_file(area: WorkArea, name: str) -> Iterator[int | None]:
    """A read-only descriptor of ``src/<name>`` if it is a regular file reached without links, else None."""
    descriptors = []
    try:
        directory = os.open(area.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        descriptors.append(directory)
        sources = os.open("src", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
        descriptors.append(sources)
        file = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=sources)
        descriptors.append(file)
    except OSError:
        yield None
    else:
        yield file if stat.S_ISREG(os.fstat(file).st_mode) else None
    finally:
        for descriptor in descriptors:
            os.close(descriptor)


def read_source_file(area: WorkArea, name: str, limit: int) -> bytes:
    """``src/<name>`` (empty if absent), head and tail kept when it is longer than ``limit``."""
    buffer = HeadTailBuffer(limit)
    with opened_source_file(area, name) as descriptor:
        while descriptor is not None and (chunk := os.read(descriptor, READ_CHUNK_BYTES)):
            buffer.append(chunk)
    return buffer.value()


def copy_source_file(area: WorkArea, name: str, destination: Path) -> bool:
    """Copy ``src/<name>`` to ``destination``; False when there is no such regular file."""
    with opened_source_file(area, name) as descriptor:
        if descriptor is None:
            return False
        with open(descriptor, "rb", closefd=False) as source, destination.open("wb") as target:
            shutil.copyfileobj(source, target)
    return True


def source_file_bytes(area: WorkArea, name: str) -> int | None:
    with opened_source_file(area, name) as descriptor:
        return None if descriptor is None else os.fstat(descriptor).st_size


def largest_file_bytes(area: WorkArea) -> int:
    """Size of the largest regular file anywhere in the area (links are not followed)."""
    largest = 0
    for directory, _, filenames in os.walk(area.root):
        for name in filenames:
            with contextlib.suppress(OSError):
                status = os.lstat(os.path.join(directory, name))
                if stat.S_ISREG(status.st_mode):
                    largest = max(largest, status.st_size)
    return largest
