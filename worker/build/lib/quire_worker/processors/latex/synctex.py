"""A build's SyncTeX data, with the build directory taken out of it.

The engines write ``<job>.synctex.gz`` (``-synctex=1``) naming every file they read by its
absolute path, ``/…/work-8f3k/src/./chapters/one.tex``, and each build has a directory of its
own: the same project would give different bytes every time, and a reader would learn the
worker's layout. So the ``Input:`` records are rewritten: files in the build directory by their
path relative to it, which for the project's files is their project path (``chapters/one.tex``,
what a resolver on Core's side matches against the project's files), and generated files such as
``main.aux`` the same way; TeX Live's own files keep their absolute path in the distribution,
the same on every build of a worker. The ``!`` anchor records (byte counts since the previous
anchor) are recomputed for the new lengths, and the result is gzipped without a name or a time,
so identical input gives identical bytes. The PDF is untouched by any of this.

The file was written inside the sandbox, so it is read as untrusted: no links, bounded
compressed and uncompressed size, bounded line length, and it must start as SyncTeX data does.
"""

import gzip
import os
import posixpath
import re
import zlib
from collections.abc import Iterable
from pathlib import Path

from quire_worker.processors.latex.work_area import WorkArea, opened_source_file

MiB = 1024 * 1024
MAX_SYNCTEX_BYTES = 64 * MiB  # compressed, as read and as published (the role's limit)
MAX_SYNCTEX_TEXT_BYTES = 256 * MiB  # uncompressed: a gzip bomb stops here (Core reads no more either)
MAX_LINE_BYTES = 64 * 1024
COMPRESS_LEVEL = 6
HEADER = b"SyncTeX Version:"
INPUT_RECORD = re.compile(rb"Input:(?P<tag>\d+):(?P<path>[^\n]*)(?P<end>\n?)")


class SynctexUnusable(Exception):
    """The build's SyncTeX data cannot be published; the message says why, for a note."""


def publish_synctex(area: WorkArea, jobname: str, destination: Path) -> None:
    """Write the build's SyncTeX data, rewritten, to ``destination``; SynctexUnusable when there is none
    to publish (nothing is left at ``destination`` then)."""
    try:
        with opened_source_file(area, f"{jobname}.synctex.gz") as descriptor:
            if descriptor is None:
                raise SynctexUnusable("the build wrote no SyncTeX data")
            if os.fstat(descriptor).st_size > MAX_SYNCTEX_BYTES:
                raise SynctexUnusable(f"the SyncTeX data is larger than {MAX_SYNCTEX_BYTES} bytes")
            with open(descriptor, "rb", closefd=False) as source, destination.open("wb") as target:
                rewrite_synctex(source, target, relative_to=_directories(area))
        if destination.stat().st_size > MAX_SYNCTEX_BYTES:
            raise SynctexUnusable(f"the SyncTeX data is larger than {MAX_SYNCTEX_BYTES} bytes")
    except (OSError, EOFError, zlib.error) as exc:  # a gzip stream that is not one, or a full disk
        destination.unlink(missing_ok=True)
        raise SynctexUnusable(f"the SyncTeX data could not be read: {exc}") from exc
    except SynctexUnusable:
        destination.unlink(missing_ok=True)
        raise


def rewrite_synctex(source, target, *, relative_to: tuple[tuple[str, str], ...]) -> None:
    """Gzipped SyncTeX from ``source`` to ``target`` with ``Input:`` paths made relative (see the module)."""
    with (
        gzip.GzipFile(fileobj=source, mode="rb") as text_in,
        gzip.GzipFile(filename="", mode="wb", fileobj=target, mtime=0, compresslevel=COMPRESS_LEVEL) as text_out,
    ):
        position, last_anchor, read = 0, 0, 0
        for line in _lines(text_in):
            read += len(line)
            if read > MAX_SYNCTEX_TEXT_BYTES:
                raise SynctexUnusable(f"the SyncTeX data is larger than {MAX_SYNCTEX_TEXT_BYTES} bytes unpacked")
            if position == 0 and not line.startswith(HEADER):
                raise SynctexUnusable("the build's SyncTeX file is not SyncTeX data")
            if line.startswith(b"Input:"):
                line = _input_record(line, relative_to)
            elif line.startswith(b"!"):
                line, last_anchor = b"!%d\n" % (position - last_anchor), position
            text_out.write(line)
            position += len(line)


def input_records(synctex_gz: bytes) -> dict[int, str]:
    """The ``Input:`` records of gzipped SyncTeX data: tag → file name."""
    records = {}
    for line in gzip.decompress(synctex_gz).splitlines(keepends=True):
        if found := INPUT_RECORD.fullmatch(line):
            records[int(found["tag"])] = os.fsdecode(found["path"])
    return records


def _lines(stream) -> Iterable[bytes]:
    while line := stream.readline(MAX_LINE_BYTES):
        if len(line) == MAX_LINE_BYTES and not line.endswith(b"\n"):
            raise SynctexUnusable(f"the SyncTeX data has a line longer than {MAX_LINE_BYTES} bytes")
        yield line


def _input_record(line: bytes, relative_to: tuple[tuple[str, str], ...]) -> bytes:
    found = INPUT_RECORD.fullmatch(line)
    if found is None:
        return line
    path = os.fsdecode(found["path"])
    for area_root, sources in relative_to:
        if path.startswith(area_root + "/"):
            path = posixpath.relpath(posixpath.normpath(path), sources)
            break
    return b"Input:%s:%s%s" % (found["tag"], os.fsencode(path), found["end"])


def _directories(area: WorkArea) -> tuple[tuple[str, str], ...]:
    """The work area and its build directory as TeX may have printed them (their real paths too): files
    in the area are named relative to the build directory, the project's own ones and, say,
    ``../home/…`` for HOME's."""
    as_given = (str(area.root), str(area.sources))
    resolved = (os.path.realpath(area.root), os.path.realpath(area.sources))
    return tuple(dict.fromkeys((as_given, resolved)))
