"""The SyncTeX routes of a build and of the project's output: "show in PDF" (forward) and "open the source of
this spot" (inverse). Each parses its query, asks ``processing/synctex`` for the data the caller may see now, and
answers with what the parser found.
"""

import uuid
from dataclasses import asdict

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from foundation.http.openapi import ERROR_RESPONSES, error
from processing.exceptions import SyncTexQueryInvalid
from processing.synctex import lookups
from processing.synctex.parser import SyncTexIndex

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


def query(serializer_class: type[serializers.Serializer], request) -> dict:
    serializer = serializer_class(data=request.query_params)
    if not serializer.is_valid():
        raise SyncTexQueryInvalid(details=serializer.errors)
    return serializer.validated_data


def forward_answer(request, index: SyncTexIndex, paths: dict[int, str]) -> Response:
    asked = query(ForwardQuerySerializer, request)
    boxes = lookups.synctex_forward_boxes(index, paths, file=asked["file"], line=asked["line"])
    return Response(ForwardAnswerSerializer({**asdict(boxes[0]), "boxes": boxes}).data)


def inverse_answer(request, index: SyncTexIndex, paths: dict[int, str]) -> Response:
    asked = query(InverseQuerySerializer, request)
    found = lookups.synctex_inverse_line(index, paths, page=asked["page"], x=asked["x"], y=asked["y"])
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
        return forward_answer(request, *lookups.job_synctex(user_id=request.user.pk, job_id=job_id))


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
        return inverse_answer(request, *lookups.job_synctex(user_id=request.user.pk, job_id=job_id))


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
        return forward_answer(request, *lookups.output_synctex(user_id=request.user.pk, project_id=project_id))


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
        return inverse_answer(request, *lookups.output_synctex(user_id=request.user.pk, project_id=project_id))
