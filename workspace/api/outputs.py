"""The project's output over HTTP: the newest successful build's PDF and what came with it, for every member
who may view the project (checked on every request: a removed member gets 404, like a stranger)."""

import uuid

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from access import facade as access
from foundation.http.openapi import ERROR_RESPONSES, error
from foundation.http.ranges import file_download
from workspace import facade
from workspace.exceptions import OutputFileNotFound
from workspace.storage import asset_storage

NO_OUTPUT = error("`no_output` before the project's first successful build; `not_found` for a project you cannot see.")
INLINE_ROLES = {"pdf", "log"}


class OutputArtifactSerializer(serializers.Serializer):
    role = serializers.CharField(help_text="`pdf`, `log`, `synctex` (gzipped, LaTeX only) or `report`.")
    media_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    url = serializers.CharField()


class CapturedDocumentSerializer(serializers.Serializer):
    path = serializers.CharField()
    version = serializers.IntegerField()


class BuildOutputSerializer(serializers.Serializer):
    job = serializers.UUIDField(help_text="The build whose success this is.")
    built_by = serializers.CharField(allow_null=True, help_text="Who asked for the build (its username).")
    built_at = serializers.DateTimeField()
    operation = serializers.CharField()
    generation = serializers.IntegerField(help_text="The project generation the build captured.")
    documents = CapturedDocumentSerializer(many=True, help_text="The versions of the text documents it built from.")
    words = serializers.IntegerField(allow_null=True)
    diagnostics = serializers.CharField(help_text="Where the build's log and structured diagnostics are.")
    artifacts = OutputArtifactSerializer(many=True)


class OutputDiagnosticsSerializer(serializers.Serializer):
    log = serializers.CharField()
    entries = serializers.ListField(child=serializers.DictField())


def _base(project_id: uuid.UUID) -> str:
    return f"/v1/projects/{project_id}/output"


class ProjectOutputApi(APIView):
    @extend_schema(
        operation_id="project_output_retrieve",
        summary="The project's current output",
        description="The newest capture's successful build of the project, whoever built it: every member who "
        "may view the project sees it. An older capture's build that finishes later never replaces it.",
        responses={200: BuildOutputSerializer, **ERROR_RESPONSES, 404: NO_OUTPUT},
        tags=["projects"],
    )
    def get(self, request, project_id: uuid.UUID):
        output = facade.output_for(user_id=request.user.pk, project_id=project_id)
        base = _base(project_id)
        return Response(
            BuildOutputSerializer(
                {
                    "job": output.job_id,
                    "built_by": access.usernames_of(user_ids=[output.built_by_id]).get(output.built_by_id),
                    "built_at": output.built_at,
                    "operation": output.operation,
                    "generation": output.generation,
                    "documents": [{"path": path, "version": version} for path, version in output.documents],
                    "words": output.words,
                    "diagnostics": f"{base}/diagnostics",
                    "artifacts": [
                        {
                            "role": file.role,
                            "media_type": file.media_type,
                            "size_bytes": file.size_bytes,
                            "url": f"{base}/{file.role}",
                        }
                        for file in sorted(output.files.values(), key=lambda file: file.role)
                    ],
                }
            ).data
        )


class ProjectOutputDiagnosticsApi(APIView):
    @extend_schema(
        operation_id="project_output_diagnostics",
        summary="The output's build log and diagnostics",
        responses={200: OutputDiagnosticsSerializer, **ERROR_RESPONSES, 404: NO_OUTPUT},
        tags=["projects"],
    )
    def get(self, request, project_id: uuid.UUID):
        output = facade.output_for(user_id=request.user.pk, project_id=project_id)
        return Response({"log": output.log, "entries": output.diagnostics})


class ProjectOutputFileApi(APIView):
    @extend_schema(
        operation_id="project_output_file",
        summary="A file of the project's output (`pdf`, `log`, `synctex`, `report`)",
        description="Streamed, with `ETag` (the file's SHA-256; `If-None-Match` answers 304) and one byte range "
        "(`Range`, 206). `?download` asks for it as an attachment named after the project.",
        parameters=[OpenApiParameter("download", OpenApiTypes.BOOL, required=False)],
        responses={(200, "*/*"): OpenApiTypes.BINARY, 206: OpenApiTypes.BINARY, 304: None, **ERROR_RESPONSES},
        tags=["projects"],
    )
    def get(self, request, project_id: uuid.UUID, role: str):
        output = facade.output_for(user_id=request.user.pk, project_id=project_id)
        file = output.files.get(role)
        if file is None:
            raise OutputFileNotFound(details={"role": role, "roles": sorted(output.files)})
        project = facade.project_describe(project_id=project_id)
        extension = file.filename.rsplit(".", 1)[-1] if "." in file.filename else "bin"
        return file_download(
            request,
            asset_storage().path_of(file.sha256),
            size=file.size_bytes,
            etag=f'"{file.sha256}"',
            content_type=file.media_type,
            filename=f"{project.name if project else 'output'}.{extension}",
            attachment="download" in request.query_params or role not in INLINE_ROLES,
        )
