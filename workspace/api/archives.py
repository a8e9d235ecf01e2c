"""Projects in and out as zip archives over HTTP."""

import uuid

from django.http import StreamingHttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from access import facade as access
from foundation.http.bodies import raw_body
from foundation.http.body_limits import body_limit
from foundation.http.openapi import ERROR_RESPONSES, error
from foundation.http.parsers import RawBodyParser
from workspace import archives, selectors, services
from workspace.api.flags import query_flag
from workspace.api.serializers import FileOutputSerializer, ProjectOutputSerializer
from workspace.encodings import legacy_encoded

ZIP_TYPES = ("application/zip", "application/x-zip-compressed", "application/octet-stream")
ARCHIVE_REFUSALS = {
    **ERROR_RESPONSES,
    400: error(
        "`archive_invalid` (not a zip, or no main file for a new project) or `archive_member_invalid` "
        "(`details.member`: a `..` or absolute path, a link or device file, a NUL, two names that differ only in "
        "case): nothing is written."
    ),
    413: error(
        "`archive_too_large` (`details.limit`: archive_bytes, members, expanded_bytes or ratio), or "
        "`file_too_large` for one member: nothing is written."
    ),
    415: error("Send the zip's raw bytes as application/zip."),
}


class LegacyFileSerializer(serializers.Serializer):
    path = serializers.CharField()
    encoding = serializers.CharField(help_text="The detected encoding (`cp1252`, `koi8-r`, …).")
    label = serializers.CharField(help_text="How people name it (`Windows-1252`).")


class UnpackedSerializer(serializers.Serializer):
    files = FileOutputSerializer(many=True, help_text="Every file written, created or replaced.")
    created = serializers.ListField(child=serializers.CharField())
    replaced = serializers.ListField(child=serializers.CharField())
    folders = serializers.ListField(child=serializers.CharField(), help_text="Folders made.")
    legacy_encoded = LegacyFileSerializer(
        many=True, help_text="Text files that are not UTF-8, kept byte for byte (convert with `PATCH`)."
    )
    skipped = serializers.ListField(child=serializers.CharField(), help_text="`__MACOSX/`, `.DS_Store` and such.")


class ProjectFromArchiveSerializer(serializers.Serializer):
    project = ProjectOutputSerializer()
    files = FileOutputSerializer(many=True)
    legacy_encoded = LegacyFileSerializer(many=True)
    skipped = serializers.ListField(child=serializers.CharField())


def _archive_body(request) -> bytes:
    return raw_body(
        request, limit_bytes=archives.max_archive_bytes(), accept=ZIP_TYPES, too_large=archives.ArchiveTooLarge
    )


@body_limit(archives.max_archive_bytes, too_large=archives.ArchiveTooLarge)
class ProjectArchiveApi(APIView):
    parser_classes = [RawBodyParser]

    @extend_schema(
        operation_id="project_archive_download",
        summary="The project as a zip",
        description="The project's current files, streamed: text exactly as the live editors left it once stored, "
        "assets byte for byte, folders (empty ones too) kept; named after the project.",
        responses={(200, "application/zip"): OpenApiTypes.BINARY, **ERROR_RESPONSES},
        tags=["projects"],
    )
    def get(self, request, project_id: uuid.UUID):
        archive = services.project_archive(user_id=request.user.pk, project_id=project_id)
        response = StreamingHttpResponse(archive.chunks, content_type="application/zip")
        response["Content-Disposition"] = content_disposition_header(True, f"{archive.name}.zip")
        response["Cache-Control"] = "private, no-store"
        return response

    @extend_schema(
        operation_id="project_archive_unpack",
        summary="Unpack a zip into the project",
        description="Every member is written in one change (collaborators see all of it or none; a text document "
        "open in editors receives its new text as an edit). Refused as a whole, writing nothing, when a member "
        "breaks a rule or a file exists already (409 `archive_conflicts`, `details.paths`) unless `overwrite`.",
        parameters=[
            OpenApiParameter("into", str, required=False, description="The folder to unpack into (default: the top)."),
            OpenApiParameter("overwrite", OpenApiTypes.BOOL, required=False),
        ],
        request={"application/zip": OpenApiTypes.BINARY},
        responses={
            200: UnpackedSerializer,
            **ARCHIVE_REFUSALS,
            409: error("`archive_conflicts` (`details.paths`), or `path_conflict`."),
        },
        tags=["projects"],
    )
    def post(self, request, project_id: uuid.UUID):
        access.permission_require(user_id=request.user.pk, project_id=project_id, permission=access.Permission.EDIT)
        unpacked = services.archive_unpack(
            actor_id=request.user.pk,
            project_id=project_id,
            data=_archive_body(request),
            into=request.query_params.get("into", ""),
            overwrite=query_flag(request, "overwrite"),
        )
        written = unpacked.written
        return Response(
            UnpackedSerializer(
                {
                    "files": written.files,
                    "created": [file.path for file in written.created],
                    "replaced": [file.path for file in written.replaced],
                    "folders": written.folders,
                    "legacy_encoded": legacy_encoded(written.files),
                    "skipped": unpacked.skipped,
                }
            ).data
        )


@body_limit(archives.max_archive_bytes, too_large=archives.ArchiveTooLarge)
class ProjectFromArchiveApi(APIView):
    parser_classes = [RawBodyParser]

    @extend_schema(
        operation_id="projects_create_from_archive",
        summary="A new project from a zip",
        description="The main file (a `.tex` with `\\\\documentclass`, else a `.typ`) and the project type are "
        "detected; a zip whose members all sit in one top-level folder is unpacked without it.",
        parameters=[OpenApiParameter("name", str, required=False)],
        request={"application/zip": OpenApiTypes.BINARY},
        responses={201: ProjectFromArchiveSerializer, **ARCHIVE_REFUSALS},
        tags=["projects"],
    )
    def post(self, request):
        project_id, skipped = services.project_from_archive(
            actor_id=request.user.pk, name=request.query_params.get("name", ""), data=_archive_body(request)
        )
        project = selectors.project_for(user_id=request.user.pk, project_id=project_id)
        files = selectors.files_of(project_id=project_id)
        body = {"project": project, "files": files, "legacy_encoded": legacy_encoded(files), "skipped": skipped}
        return Response(ProjectFromArchiveSerializer(body).data, status=status.HTTP_201_CREATED)
