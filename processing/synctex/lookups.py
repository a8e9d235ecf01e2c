"""SyncTeX lookups on a build: the parsed data of a build's ``synctex`` artifact, or of the project's output.

Read under the same authorization as downloading the artifact: the job must be visible to the caller now,
checked on every request (a revoked member or a stranger gets 404). The project's output (Workspace's copy of
its newest build) answers the same for every member who may view the project. Parsed files are kept per
artifact digest in a small in-process LRU, which holds bytes, never rights.
"""

import io
import json
import posixpath
import tarfile
import threading
import uuid
from array import array
from collections import OrderedDict
from collections.abc import Callable

from processing import selectors
from processing.exceptions import SyncTexNoMatch, SyncTexNotAvailable, SyncTexUnreadable
from processing.kernel.blobs import blob_read
from processing.models import ProcessingArtifact, ProcessingJob
from processing.synctex import parser as synctex
from workspace import facade as workspace

SYNCTEX_ROLE = "synctex"
CACHED_FILES = 4
CACHE_BYTES = 256 * 1024 * 1024  # a 300-page book's index takes 10 MiB; the last one asked for always stays

# digest → (the parsed file, or why it is unreadable; its footprint in bytes), the last asked for last
_parsed: OrderedDict[str, tuple[synctex.SyncTexIndex | str, int]] = OrderedDict()
_parsed_lock = threading.Lock()


def footprint(index: synctex.SyncTexIndex) -> int:
    """Roughly the memory a parsed file holds: its arrays, and some 400 bytes for each (input, line)."""
    return sum(a.itemsize * len(a) for a in vars(index).values() if isinstance(a, array)) + 400 * len(index.by_link)


def synctex_index_for(digest: str, load: Callable[[], bytes]) -> synctex.SyncTexIndex:
    """The parsed file of that digest, parsed from ``load()`` unless it is among the last few asked for.

    Two requests missing at once both parse; the result is the same, and the cache small."""
    with _parsed_lock:
        parsed, _ = _parsed.get(digest, (None, 0))
        if parsed is not None:
            _parsed.move_to_end(digest)
    if parsed is None:
        try:
            parsed = synctex.synctex_parse(load())
        except SyncTexUnreadable as exc:
            parsed = exc.message  # remembered too: refusing a 256 MiB bomb again costs as much as the first time
        _remember(digest, parsed)
    if isinstance(parsed, str):
        raise SyncTexUnreadable(parsed)
    return parsed


def _remember(digest: str, parsed: synctex.SyncTexIndex | str) -> None:
    with _parsed_lock:
        _parsed[digest] = (parsed, 0 if isinstance(parsed, str) else footprint(parsed))
        while len(_parsed) > CACHED_FILES or (
            len(_parsed) > 1 and sum(size for _, size in _parsed.values()) > CACHE_BYTES
        ):
            _parsed.popitem(last=False)


def build_files(job: ProcessingJob) -> list[str]:
    """The project paths the build read: the text documents it captured, else (a job from before captures
    were recorded) the files its input bundle's manifest lists."""
    documents = (job.captured or {}).get("documents") or []
    paths = [entry[0] for entry in documents if isinstance(entry, list) and entry and isinstance(entry[0], str)]
    if paths or job.input_blob_id is None:
        return paths
    try:
        with tarfile.open(fileobj=io.BytesIO(blob_read(job.input_blob_id)), mode="r:") as archive:
            first = archive.next()  # project-bundle/v1 puts manifest.json first
            manifest = json.loads(archive.extractfile(first).read()) if first and first.name == "manifest.json" else {}
    except (tarfile.TarError, ValueError, AttributeError):
        return []
    return [
        item["path"]
        for item in manifest.get("files", [])
        if isinstance(item, dict) and isinstance(item.get("path"), str)
    ]


def job_synctex(*, user_id: int, job_id: uuid.UUID) -> tuple[synctex.SyncTexIndex, dict[int, str]]:
    """The build's parsed SyncTeX data and its inputs' project paths (tag → path), if the caller may see it now."""
    job = selectors.job_visible(user_id=user_id, job_id=job_id)
    artifact = ProcessingArtifact.objects.filter(job_id=job.pk, role=SYNCTEX_ROLE).only("sha256", "blob_id").first()
    if artifact is None:
        raise SyncTexNotAvailable()
    index = synctex_index_for(artifact.sha256, lambda: blob_read(artifact.blob_id))
    return index, synctex.synctex_input_paths(index.inputs, build_files(job))


def output_synctex(*, user_id: int, project_id: uuid.UUID) -> tuple[synctex.SyncTexIndex, dict[int, str]]:
    """The project output's parsed SyncTeX data and its inputs' project paths, for a member who may view the
    project now (the output is everyone's: docs/architecture.md §7)."""
    output = workspace.output_for(user_id=user_id, project_id=project_id)
    file = output.files.get(SYNCTEX_ROLE)
    if file is None:
        raise SyncTexNotAvailable()
    index = synctex_index_for(file.sha256, lambda: workspace.output_content_read(sha256=file.sha256))
    return index, synctex.synctex_input_paths(index.inputs, [path for path, _ in output.documents])


def synctex_forward_boxes(
    index: synctex.SyncTexIndex, paths: dict[int, str], *, file: str, line: int
) -> list[synctex.PageBox]:
    """The boxes the line of the project file ``file`` occupies, first page first; raises ``SyncTexNoMatch`` when
    it made nothing on any page."""
    wanted = posixpath.normpath(file.lstrip("/"))
    boxes = synctex.synctex_forward(index, [tag for tag, path in paths.items() if path == wanted], line)
    if not boxes:
        raise SyncTexNoMatch(details={"file": file, "line": line})
    return boxes


def synctex_inverse_line(
    index: synctex.SyncTexIndex, paths: dict[int, str], *, page: int, x: float, y: float
) -> synctex.SourceLine:
    """The project file and line that typeset the point (x, y) of the page; raises ``SyncTexNoMatch``."""
    found = synctex.synctex_inverse(index, page, x, y, paths)
    if found is None:
        raise SyncTexNoMatch(details={"page": page, "x": x, "y": y})
    return found
