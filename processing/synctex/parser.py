"""SyncTeX: where a LaTeX build put each source line, and which source line made a spot of the PDF.

``pdflatex -synctex=1`` writes ``<job>.synctex.gz``, a gzipped text file of one-line records, specified in
synctex(5) and by TeX Live's ``texk/web2c/synctexdir/synctex_parser.c``. We parse it once into flat
arrays and answer the two lookups of the editor:

- forward, "show in PDF": (source file, line) → the boxes that line's material occupies, one per page;
- inverse, modifier-click in the PDF: (page, point) → the source file and line that made it.

Positions are PDF points (big points, 1/72 in) from the **top-left** corner of the page, y growing
downward: SyncTeX's own convention (what ``synctex view`` prints), which a PDF viewer maps onto a page
of known height. Record names follow synctex(5): ``[``…``]`` is a vbox, ``(``…``)`` an hbox, ``h``/``v``
void boxes; ``x k g $ r`` points inside a box. Nothing here reads the database.
"""

import posixpath
import zlib
from array import array
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter

from processing.exceptions import SyncTexUnreadable

MiB = 1024 * 1024
UNCOMPRESSED_BYTES_MAX = 256 * MiB
CHUNK_BYTES = 1 * MiB
GZIP_MAGIC = b"\x1f\x8b"
RECORD_BYTES_MAX = 64 * 1024  # a record is one short line; an Input path is at most a few KiB
RECORDS_MAX = 8_000_000  # a 300-page book has 400 000; this bounds the parse (~2 µs a record), newlines or not
SP_PER_BP = 65781.76  # 65536 sp per TeX point × 72.27 TeX points per 72 big points
LEAF_FIELDS = {ord("x"): 4, ord("k"): 5, ord("g"): 4, ord("$"): 4, ord("r"): 7}  # points: fields sans column
LEAF_STRIDE = 4


@dataclass(frozen=True)
class PageBox:
    """A rectangle on a page: PDF points from the page's top-left corner, y downward."""

    page: int
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int


class SyncTexIndex:
    """One parsed SyncTeX file. Boxes are hboxes (void or not); leaves are the points recorded in them.

    Geometry stays in the file's own units until a lookup converts its few answers. ``by_link`` maps
    ``(tag, line)`` to the hboxes holding that line's material: the box itself for a box recorded with
    that link, the enclosing hbox for a point record.
    """

    def __init__(self) -> None:
        self.inputs: dict[int, str] = {}
        self.magnification, self.unit, self.x_offset, self.y_offset = 1000, 1, 0, 0
        self.box_page, self.box_tag, self.box_line, self.box_depth = array("i"), array("i"), array("i"), array("i")
        self.box_left, self.box_top, self.box_right, self.box_bottom = array("i"), array("i"), array("i"), array("i")
        self.box_leaves_start, self.box_leaves_end = array("i"), array("i")
        self.leaves = array("i")  # LEAF_STRIDE numbers a leaf: tag, line, h, enclosing hbox (TeX's are 32-bit)
        self.sheets: dict[int, list[range]] = defaultdict(list)  # page → the box ids its sheets recorded
        self.by_link: dict[tuple[int, int], list[int]] = {}
        self.lines_by_tag: dict[int, list[int]] = {}
        # page → its page box's link: the line being read when it was shipped out, as its headline and footline
        self.shipped_at: dict[int, set[tuple[int, int]]] = defaultdict(set)

    def scale(self) -> tuple[float, float, float]:
        """PDF points per unit of the file, and the preamble's offsets in PDF points."""
        origin = self.unit / SP_PER_BP
        return origin * self.magnification / 1000, self.x_offset * origin, self.y_offset * origin

    def box_rectangle(self, box: int) -> tuple[float, float, float, float]:
        """(left, top, right, bottom) of a box in PDF points."""
        scale, x0, y0 = self.scale()
        return (
            self.box_left[box] * scale + x0,
            self.box_top[box] * scale + y0,
            self.box_right[box] * scale + x0,
            self.box_bottom[box] * scale + y0,
        )

    def area(self, box: int) -> int:
        return (self.box_right[box] - self.box_left[box]) * (self.box_bottom[box] - self.box_top[box])

    def to_units(self, x: float, y: float) -> tuple[float, float]:
        scale, x0, y0 = self.scale()
        return (x - x0) / scale, (y - y0) / scale


class _Reader:
    """Turns records into a ``SyncTexIndex``; ValueError, IndexError or OverflowError mean a malformed record."""

    def __init__(self) -> None:
        self.index = SyncTexIndex()
        self.stack: list[int] = []  # the open boxes: an hbox's id, or -1 for a vbox
        self.sheet: int | None = None
        self.sheet_start = 0
        self.forms = 0  # depth of pdfTeX forms (\pdfxform) being recorded; their content is not a page's
        self.last_v = b"0"  # "=" in a point repeats the last full point's v
        # The boundaries ("x") a box opens with carry where its paragraph ended; they take the next kern's link
        self.heading: list[int] = []

    def read(self, records: Iterator[bytes]) -> SyncTexIndex:
        if not next(records, b"").startswith(b"SyncTeX Version:"):
            raise SyncTexUnreadable("This is not SyncTeX data.")
        leaf, other = self.leaf, self.other
        for record in records:
            if record[:1] and record[0] in LEAF_FIELDS:
                leaf(record)
            elif other(record):
                break
        links = groupby(sorted(self.index.by_link), key=itemgetter(0))  # (tag, line), by tag then line
        self.index.lines_by_tag = {tag: [line for _, line in lines] for tag, lines in links}
        return self.index

    def other(self, record: bytes) -> bool:
        """Any record but a point; True at the postamble, after which nothing locates anything."""
        match record[:1]:
            case b"(":
                self.stack.append(self.box(record))
            case b"h":
                self.box(record)
            case b")":
                if not self.stack or self.stack[-1] < 0:
                    raise ValueError("')' closes no hbox")
                self.index.box_leaves_end[self.stack.pop()] = len(self.index.leaves) // LEAF_STRIDE
                self.heading = []
            case b"[":
                link = self.fields(record)[:2]
                if not self.stack and self.sheet is not None and not self.forms:  # the page's own box
                    self.index.shipped_at[self.sheet].add(link)
                self.stack.append(-1)
            case b"]":
                if not self.stack or self.stack.pop() != -1:
                    raise ValueError("']' closes no vbox")
            case b"{":
                self.sheet_open(int(record[1:]))
            case b"}":
                self.sheet_close(int(record[1:]))
            case b"<" | b">":
                self.forms = max(0, self.forms + (1 if record[:1] == b"<" else -1))
            case b"I" if record.startswith(b"Input:"):
                tag, _, name = record[6:].partition(b":")
                self.index.inputs[int(tag)] = name.decode("utf-8", "replace")
            case b"M" | b"U" | b"X" | b"Y":
                self.preamble(record)
            case b"P" if record.startswith(b"Postamble:"):
                return True
        return False  # anything else (offsets "!", void vboxes, form refs, newer records) locates nothing

    def preamble(self, record: bytes) -> None:
        name, _, value = record.partition(b":")
        field = {
            b"Magnification": "magnification",
            b"Unit": "unit",
            b"X Offset": "x_offset",
            b"Y Offset": "y_offset",
        }.get(name)
        if field is not None and self.sheet is None and not self.index.sheets:
            setattr(self.index, field, int(value))
            if self.index.unit <= 0 or self.index.magnification <= 0:
                raise ValueError("Unit and Magnification are positive")

    def sheet_open(self, page: int) -> None:
        if self.sheet is not None or self.stack:
            raise ValueError("a sheet inside a sheet")
        self.sheet, self.sheet_start = page, len(self.index.box_page)

    def sheet_close(self, page: int) -> None:
        if self.sheet is None or self.stack:
            raise ValueError("a sheet closed while none or a box is open")
        boxes = range(self.sheet_start, len(self.index.box_page))
        if page == self.sheet:
            self.index.sheets[page].append(boxes)
        else:  # LuaTeX records boxes it ships out as forms as "{1 … }0": not a page
            self.index.box_page[self.sheet_start :] = array("i", [0]) * len(boxes)
        self.sheet = None

    def box(self, record: bytes) -> int:
        tag, line, h, v, size = self.fields(record)
        width, height, depth = (int(value) for value in size.split(b","))
        index, box = self.index, len(self.index.box_page)
        index.box_page.append(0 if self.forms or self.sheet is None else self.sheet)
        index.box_tag.append(tag), index.box_line.append(line), index.box_depth.append(len(self.stack))
        index.box_left.append(min(h, h + width)), index.box_right.append(max(h, h + width))
        index.box_top.append(v - height), index.box_bottom.append(v + depth)
        first_leaf = len(index.leaves) // LEAF_STRIDE
        index.box_leaves_start.append(first_leaf), index.box_leaves_end.append(first_leaf)
        self.link(tag, line, box)
        self.heading = []
        return box

    def leaf(self, record: bytes) -> None:
        """The hot path (nine records in ten): ``<kind><tag>,<line>[,<column>]:<h>,<v>[:<width>…]``."""
        fields = record[1:].replace(b":", b",").split(b",")
        kind = record[0]
        column = len(fields) - LEAF_FIELDS[kind]  # 1 when the record carries a column
        if column not in (0, 1):
            raise ValueError("a point record with the wrong number of fields")
        if fields[3 + column] != b"=":
            self.last_v = fields[3 + column]
        parent = self.stack[-1] if self.stack else -1
        if parent < 0:
            return  # glue and kerns between the lines of a vbox are not anyone's line of text
        tag, line, h = int(fields[0]), int(fields[1]), int(fields[2 + column])
        if kind == ord("k"):
            h -= max(int(fields[4 + column]), 0)  # a kern is recorded at its end; words end where it starts
        self.link(tag, line, parent)
        leaves, leaf = self.index.leaves, len(self.index.leaves) // LEAF_STRIDE
        if kind == ord("x") and (self.heading or leaf == self.index.box_leaves_start[parent]):
            self.heading.append(leaf)
        elif self.heading:
            if kind in (ord("k"), ord("g")):  # as synctex_parser.c: a box's heading boundaries take this link
                for waiting in self.heading:
                    leaves[waiting * LEAF_STRIDE], leaves[waiting * LEAF_STRIDE + 1] = tag, line
            self.heading = []
        leaves.extend((tag, line, h, parent))

    def link(self, tag: int, line: int, box: int) -> None:
        boxes = self.index.by_link.get((tag, line))
        if boxes is None:
            self.index.by_link[(tag, line)] = [box]
        elif boxes[-1] != box:  # consecutive points of one line fall in the same box
            boxes.append(box)

    def fields(self, record: bytes) -> tuple[int, int, int, int, bytes]:
        """``<tag>,<line>[,<column>]:<h>,<v>[:<size>]`` → tag, line, h, v and the unparsed size."""
        link, point, *size = record[1:].split(b":", 2)
        tag, line = link.split(b",", 2)[:2]
        h, v = point.split(b",")
        if v != b"=":
            self.last_v = v
        return int(tag), int(line), int(h), int(self.last_v), size[0] if size else b""


def _records(data: bytes) -> Iterator[bytes]:
    """The lines of the file (gzipped, or plain), without their ends."""
    if data[:2] != GZIP_MAGIC and len(data) > UNCOMPRESSED_BYTES_MAX:
        raise SyncTexUnreadable(f"The SyncTeX data is larger than {UNCOMPRESSED_BYTES_MAX // MiB} MiB.")
    pending, count = b"", 0
    plain = (data[start : start + CHUNK_BYTES] for start in range(0, len(data), CHUNK_BYTES))
    for chunk in _gunzipped(data) if data[:2] == GZIP_MAGIC else plain:
        lines = (pending + chunk).replace(b"\r\n", b"\n").split(b"\n")
        pending, count = lines.pop(), count + len(lines)
        if len(pending) > RECORD_BYTES_MAX:
            raise SyncTexUnreadable("The SyncTeX data has a record longer than any SyncTeX writes.")
        if count > RECORDS_MAX:
            raise SyncTexUnreadable(f"The SyncTeX data has more than {RECORDS_MAX} records.")
        yield from lines
    yield pending


def _gunzipped(data: bytes) -> Iterator[bytes]:
    """The uncompressed bytes of every gzip member, in chunks, never more than UNCOMPRESSED_BYTES_MAX in all."""
    total = 0
    while data:
        if data[:2] != GZIP_MAGIC:
            raise ValueError("bytes after the gzip data")
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        chunk = inflater.decompress(data, CHUNK_BYTES)
        while chunk:
            total += len(chunk)
            if total > UNCOMPRESSED_BYTES_MAX:
                raise SyncTexUnreadable(f"The SyncTeX data is larger than {UNCOMPRESSED_BYTES_MAX // MiB} MiB.")
            yield chunk
            chunk = inflater.decompress(inflater.unconsumed_tail, CHUNK_BYTES)
        if not inflater.eof:
            raise ValueError("truncated gzip data")
        data = inflater.unused_data


def synctex_parse(data: bytes) -> SyncTexIndex:
    """Parse a ``.synctex.gz`` (or uncompressed ``.synctex``); SyncTexUnreadable when it is not sound."""
    try:
        return _Reader().read(_records(data))
    except (ValueError, IndexError, OverflowError, zlib.error) as exc:
        raise SyncTexUnreadable("The SyncTeX data is malformed.") from exc


def synctex_forward(index: SyncTexIndex, tags: Collection[int], line: int) -> list[PageBox]:
    """Where ``line`` of the input ``tags`` (one file may be input under several) was typeset: its boxes united
    per page, in page order. A line that made no material (a comment, a blank line) answers for the nearest
    following line of the same file that did; no such line, no boxes. A page's headline and footline carry
    the line where it was shipped out: they count only when nothing else has that line."""
    for candidate in _lines_from(index, tags, line):
        found = [(tag, box) for tag in tags for box in index.by_link.get((tag, candidate), ()) if index.box_page[box]]
        text = [box for tag, box in found if (tag, candidate) not in index.shipped_at.get(index.box_page[box], ())]
        if found:
            return _united_per_page(index, text or [box for _, box in found])
    return []


def _lines_from(index: SyncTexIndex, tags: Collection[int], line: int) -> list[int]:
    following: set[int] = set()
    for tag in tags:
        lines = index.lines_by_tag.get(tag, [])
        following.update(lines[bisect_left(lines, line) :])
    return sorted(following)


def _united_per_page(index: SyncTexIndex, boxes: list[int]) -> list[PageBox]:
    extents: dict[int, tuple[float, float, float, float]] = {}
    for box in boxes:
        rectangle, page = index.box_rectangle(box), index.box_page[box]
        known = extents.get(page, rectangle)
        extents[page] = (
            min(rectangle[0], known[0]),
            min(rectangle[1], known[1]),
            max(rectangle[2], known[2]),
            max(rectangle[3], known[3]),
        )
    return [
        PageBox(page, left, top, right - left, bottom - top)
        for page, (left, top, right, bottom) in sorted(extents.items())
    ]


def synctex_inverse(index: SyncTexIndex, page: int, x: float, y: float, paths: dict[int, str]) -> SourceLine | None:
    """The source line that made the point (x, y) of ``page``, among the inputs ``paths`` names (tag → path).

    The innermost (then smallest) hbox holding the point decides, else the nearest hbox of the page. An hbox's
    own line is where its paragraph ended: the points recorded inside it say better which line made the spot.
    """
    h, v = index.to_units(x, y)
    boxes = [box for ids in index.sheets.get(page, ()) for box in ids if index.box_page[box] == page]
    distance = {box: _distance(index, box, h, v) for box in boxes}
    holding = sorted(
        (box for box in boxes if not distance[box]), key=lambda box: (-index.box_depth[box], index.area(box))
    )
    nearby = sorted((box for box in boxes if distance[box] and index.area(box)), key=distance.__getitem__)
    for box in holding + nearby:
        found = _line_in_box(index, box, h, paths)
        if found is not None:
            return found
    return None


def _distance(index: SyncTexIndex, box: int, h: float, v: float) -> float:
    dx = max(index.box_left[box] - h, 0, h - index.box_right[box])
    dy = max(index.box_top[box] - v, 0, v - index.box_bottom[box])
    return (dx * dx + dy * dy) ** 0.5


def _line_in_box(index: SyncTexIndex, box: int, h: float, paths: dict[int, str]) -> SourceLine | None:
    """Of the points nearest ``h`` on its left and on its right, the one of the smallest line (as ``synctex edit``
    does: the points at a typeset line's ends carry where the paragraph ended), else the box's own line."""
    left: list[tuple[int, int, int]] = []  # (h, tag, line) of the nearest points, several when at one h
    right: list[tuple[int, int, int]] = []
    leaves = index.leaves
    for start in range(index.box_leaves_start[box] * LEAF_STRIDE, index.box_leaves_end[box] * LEAF_STRIDE, LEAF_STRIDE):
        tag, line, position, parent = leaves[start : start + LEAF_STRIDE]
        if parent != box or tag not in paths or line <= 0:
            continue
        side = left if position <= h else right
        if not side or side[0][0] == position:
            side.append((position, tag, line))
        elif (position > side[0][0]) == (side is left):  # nearer: the rightmost on the left, leftmost on the right
            side[:] = [(position, tag, line)]
    if left or right:
        _, tag, line = min(left + right, key=lambda point: point[2])
        return SourceLine(paths[tag], line)
    if index.box_tag[box] in paths and index.box_line[box] > 0:
        return SourceLine(paths[index.box_tag[box]], index.box_line[box])
    return None


def synctex_input_paths(inputs: dict[int, str], build_files: Collection[str]) -> dict[int, str]:
    """Tag → project path, for the inputs that are files of the build; TeX's own files are left out.

    TeX records names as it opened them: relative (``./chapters/one.tex``, or as the worker rewrites them) or
    absolute under the directory the build ran in (``/tmp/build-x/./chapters/one.tex``), which is inferred
    unless names are relative already: the prefix that leaves a build file for the most inputs.
    """
    files = frozenset(build_files)
    names = {tag: posixpath.normpath(name) for tag, name in inputs.items()}
    relative = any(_build_file(name, files) for name in names.values() if not name.startswith("/"))
    root = None if relative else _build_root(names.values(), files)
    paths: dict[int, str] = {}
    for tag, name in names.items():
        if name.startswith("/"):
            name = name[len(root) + 1 :] if root is not None and name.startswith(root + "/") else ""
        path = _build_file(name, files)
        if path is not None:
            paths[tag] = path
    return paths


def _build_root(names: Collection[str], files: frozenset[str]) -> str | None:
    votes: Counter[str] = Counter()
    for name in names:
        parts = name.split("/") if name.startswith("/") else []
        cut = next((cut for cut in range(1, len(parts)) if _build_file("/".join(parts[cut:]), files)), None)
        if cut is not None:
            votes["/".join(parts[:cut])] += 1  # the longest tail that is a build file: "/a/b.tex" → root "/a"
    return votes.most_common(1)[0][0] if votes else None  # a tie goes to the first input, the main file


def _build_file(name: str, files: frozenset[str]) -> str | None:
    if name in files:
        return name
    return name + ".tex" if name + ".tex" in files else None  # TeX may record "\input{x}" as "x"
