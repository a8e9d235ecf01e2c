"""SyncTeX lookups on a build: "show in PDF" (forward) and "open the source of this spot" (inverse).

Resolved here, from the build's ``synctex`` artifact, under the same authorization as downloading it:
the job must be visible to the caller now, checked on every request (a revoked member or a stranger gets
404). The project's output (Workspace's copy of its newest build) answers the same for every member who may
view the project. Parsed files are kept per artifact digest in a small in-process LRU, which holds bytes, never rights.
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
from dataclasses import asdict

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from config.http.openapi import ERROR_RESPONSES, error
from processing import selectors
from processing.api import synctex_parser as synctex
from processing.blobs import blob_read
from processing.exceptions import SyncTexNoMatch, SyncTexNotAvailable, SyncTexQueryInvalid, SyncTexUnreadable
from processing.models import ProcessingArtifact, ProcessingJob
from workspace import facade as workspace

SYNCTEX_ROLE = "synctex"
CACHED_FILES = 4
CACHE_BYTES = 256 * 1024 * 1024  # a 300-page book's index takes 10 MiB; the last one asked for always stays
COORDINATE_MAX = 1e6  # PDF points; no page is that large (PDF caps them at 14 400)
NUMBER_MAX = 2**31 - 1
COORDINATES = "PDF points (1/72 in) from the page's top-left corner, y growing downward."


class ForwardQuerySerializer(serializers.Serializer):
    file = serializers.CharField(max_length=1024, help_text="A project-relative path, e.g. `chapters/one.tex`.")
    line = serializers.IntegerField(min_value=1, max_value=NUMBER_MAX, help_text="1-based source line.")


class InverseQuerySerializer(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, max_value=NUMBER_MAX, help_text="1-based PDF page.")
    x = serializers.FloatField(min_value=-COORDINATE_MAX, max_value=COORDINATE_MAX, help_text=COORDINATES)
    y = serializers.FloatField(min_value=-COORDINATE_MAX, max_value=COORDINATE_MAX, help_text=COORDINATES)


class PageBoxSerializer(serializers.Serializer):
    page = serializers.IntegerField()
    x = serializers.FloatField(help_text=f"Left edge; {COORDINATES}")
    y = serializers.FloatField(help_text=f"Top edge; {COORDINATES}")
    width = serializers.FloatField()
    height = serializers.FloatField()


class ForwardAnswerSerializer(PageBoxSerializer):
    boxes = PageBoxSerializer(
        many=True, help_text="Every page the line landed on, in page order; the first is the answer above."
    )


class InverseAnswerSerializer(serializers.Serializer):
    file = serializers.CharField(help_text="A project-relative path of the build's input.")
    line = serializers.IntegerField(help_text="1-based source line.")


NOT_FOUND = error(
    "`job_not_found` (or `no_output`), `synctex_not_available` (no SyncTeX data: not a finished LaTeX build), "
    "`synctex_unreadable`, or `synctex_no_match`."
)
BAD_QUERY = error("`synctex_query_invalid`; `details` names the parameters.")

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


def query(serializer_class: type[serializers.Serializer], request) -> dict:
    serializer = serializer_class(data=request.query_params)
    if not serializer.is_valid():
        raise SyncTexQueryInvalid(details=serializer.errors)
    return serializer.validated_data


def forward_answer(request, index: synctex.SyncTexIndex, paths: dict[int, str]) -> Response:
    asked = query(ForwardQuerySerializer, request)
    wanted = posixpath.normpath(asked["file"].lstrip("/"))
    boxes = synctex.synctex_forward(index, [tag for tag, path in paths.items() if path == wanted], asked["line"])
    if not boxes:
        raise SyncTexNoMatch(details={"file": asked["file"], "line": asked["line"]})
    return Response(ForwardAnswerSerializer({**asdict(boxes[0]), "boxes": boxes}).data)


def inverse_answer(request, index: synctex.SyncTexIndex, paths: dict[int, str]) -> Response:
    asked = query(InverseQuerySerializer, request)
    found = synctex.synctex_inverse(index, asked["page"], asked["x"], asked["y"], paths)
    if found is None:
        raise SyncTexNoMatch(details={"page": asked["page"], "x": asked["x"], "y": asked["y"]})
    return Response(InverseAnswerSerializer(found).data)


FORWARD_SUMMARY = "Where a source line landed in the build's PDF"
FORWARD_DESCRIPTION = (
    "The box of the line's material on the first page it landed on, and all its boxes. A line that made "
    f"nothing (blank, a comment) answers for the next line of the file that did. {COORDINATES}"
)
INVERSE_SUMMARY = "Which source line made a spot of the build's PDF"
INVERSE_DESCRIPTION = f"The project file and line that typeset the point (x, y) of the page. {COORDINATES}"
FORWARD_RESPONSES = {200: ForwardAnswerSerializer, **ERROR_RESPONSES, 400: BAD_QUERY, 404: NOT_FOUND}
INVERSE_RESPONSES = {200: InverseAnswerSerializer, **ERROR_RESPONSES, 400: BAD_QUERY, 404: NOT_FOUND}


class SyncTexForwardApi(APIView):
    @extend_schema(
        operation_id="processing_jobs_synctex_forward",
        summary=FORWARD_SUMMARY,
        description=FORWARD_DESCRIPTION,
        parameters=[ForwardQuerySerializer],
        responses=FORWARD_RESPONSES,
        tags=["processing"],
    )
    def get(self, request, job_id: uuid.UUID):
        return forward_answer(request, *job_synctex(user_id=request.user.pk, job_id=job_id))


class SyncTexInverseApi(APIView):
    @extend_schema(
        operation_id="processing_jobs_synctex_inverse",
        summary=INVERSE_SUMMARY,
        description=INVERSE_DESCRIPTION,
        parameters=[InverseQuerySerializer],
        responses=INVERSE_RESPONSES,
        tags=["processing"],
    )
    def get(self, request, job_id: uuid.UUID):
        return inverse_answer(request, *job_synctex(user_id=request.user.pk, job_id=job_id))


class OutputSyncTexForwardApi(APIView):
    @extend_schema(
        operation_id="project_output_synctex_forward",
        summary=f"{FORWARD_SUMMARY} (the project's output)",
        description=FORWARD_DESCRIPTION,
        parameters=[ForwardQuerySerializer],
        responses=FORWARD_RESPONSES,
        tags=["projects"],
    )
    def get(self, request, project_id: uuid.UUID):
        return forward_answer(request, *output_synctex(user_id=request.user.pk, project_id=project_id))


class OutputSyncTexInverseApi(APIView):
    @extend_schema(
        operation_id="project_output_synctex_inverse",
        summary=f"{INVERSE_SUMMARY} (the project's output)",
        description=INVERSE_DESCRIPTION,
        parameters=[InverseQuerySerializer],
        responses=INVERSE_RESPONSES,
        tags=["projects"],
    )
    def get(self, request, project_id: uuid.UUID):
        return inverse_answer(request, *output_synctex(user_id=request.user.pk, project_id=project_id))
