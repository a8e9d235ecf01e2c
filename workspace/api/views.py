import uuid

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from access import facade as access
from foundation.http.bodies import raw_body
from foundation.http.body_limits import body_limit
from foundation.http.openapi import ERROR_RESPONSES, error
from foundation.http.parsers import BoundedJSONParser, RawBodyParser
from foundation.http.preconditions import if_match_number
from workspace import limits, selectors, services
from workspace.api.serializers import (
    FileChangeInputSerializer,
    FileOutputSerializer,
    ProjectCreateInputSerializer,
    ProjectOutputSerializer,
    ProjectUpdateInputSerializer,
    TreeEntrySerializer,
)
from workspace.downloads import file_response
from workspace.models import FileKind

FILE_WRITE_ERRORS = {
    **ERROR_RESPONSES,
    409: error("The path clashes with another file or folder, or the project is full."),
    413: error("The body is larger than the limit for this kind of file."),
    415: error("Form encodings are refused; send the raw bytes."),
}


class ProjectListCreateApi(APIView):
    @extend_schema(operation_id="projects_list", responses={200: ProjectOutputSerializer(many=True)}, tags=["projects"])
    def get(self, request):
        projects = selectors.projects_visible_to(user_id=request.user.pk)
        return Response(ProjectOutputSerializer(projects, many=True).data)

    @extend_schema(
        operation_id="projects_create",
        request=ProjectCreateInputSerializer,
        responses={201: ProjectOutputSerializer, **ERROR_RESPONSES},
        tags=["projects"],
    )
    def post(self, request):
        payload = ProjectCreateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        project = services.project_create(
            actor_id=request.user.pk,
            name=data["name"],
            project_type=data["type"],
            entry_path=data.get("entry_path"),
            compiler=data.get("compiler"),
            starter=data["starter"],
        )
        return Response(ProjectOutputSerializer(project).data, status=status.HTTP_201_CREATED)


class ProjectDetailApi(APIView):
    @extend_schema(
        operation_id="projects_retrieve",
        responses={200: ProjectOutputSerializer, **ERROR_RESPONSES},
        tags=["projects"],
    )
    def get(self, request, project_id: uuid.UUID):
        project = selectors.project_for(user_id=request.user.pk, project_id=project_id)
        return Response(ProjectOutputSerializer(project).data)

    @extend_schema(
        operation_id="projects_update",
        request=ProjectUpdateInputSerializer,
        responses={200: ProjectOutputSerializer, **ERROR_RESPONSES},
        tags=["projects"],
    )
    def patch(self, request, project_id: uuid.UUID):
        payload = ProjectUpdateInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        project = services.project_update(actor_id=request.user.pk, project_id=project_id, **payload.validated_data)
        return Response(ProjectOutputSerializer(project).data)

    @extend_schema(operation_id="projects_destroy", responses={204: None, **ERROR_RESPONSES}, tags=["projects"])
    def delete(self, request, project_id: uuid.UUID):
        services.project_delete(actor_id=request.user.pk, project_id=project_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FileListApi(APIView):
    @extend_schema(
        operation_id="project_files_list",
        description="The project's tree: every folder (`kind: folder`, empty ones included) and file, each folder "
        "before what is in it.",
        responses={200: TreeEntrySerializer(many=True), **ERROR_RESPONSES},
        tags=["files"],
    )
    def get(self, request, project_id: uuid.UUID):
        selectors.project_for(user_id=request.user.pk, project_id=project_id)
        files = FileOutputSerializer(selectors.files_of(project_id=project_id), many=True).data
        folders = [
            {
                "path": path,
                "kind": "folder",
                **dict.fromkeys(["id", "encoding", "size", "sha256", "version", "updated_at"]),
            }
            for path in selectors.folders_of(project_id=project_id)
        ]
        return Response(sorted([*folders, *files], key=lambda entry: entry["path"].split("/")))


KIND_PARAMETER = OpenApiParameter(
    "kind",
    enum=FileKind.values,
    required=False,
    description="Override the kind chosen from the extension (text documents must be UTF-8).",
)

IF_MATCH_PARAMETER = OpenApiParameter(
    "If-Match",
    location=OpenApiParameter.HEADER,
    required=False,
    description='The version the change is based on, as served in the ETag (`"7"`).',
)


@body_limit(lambda: max(limits.max_asset_bytes(), limits.max_text_bytes()))
class FileDetailApi(APIView):
    parser_classes = [RawBodyParser]

    @extend_schema(
        operation_id="project_files_retrieve",
        responses={(200, "*/*"): OpenApiTypes.BINARY, **ERROR_RESPONSES},
        description=(
            "The file's bytes: text documents as UTF-8 text/plain (with every edit accepted from live editors), "
            'assets as attachments. Served with `ETag: "<version>"`.'
        ),
        tags=["files"],
    )
    def get(self, request, project_id: uuid.UUID, path: str):
        selectors.project_for(user_id=request.user.pk, project_id=project_id)
        file = selectors.file_current(project_id=project_id, path=path)
        return file_response(file, attachment=False)

    @extend_schema(
        operation_id="project_files_put",
        parameters=[KIND_PARAMETER, IF_MATCH_PARAMETER],
        request={"application/octet-stream": OpenApiTypes.BINARY},
        responses={
            200: FileOutputSerializer,
            201: FileOutputSerializer,
            **FILE_WRITE_ERRORS,
            412: error("`version_mismatch`: `details.current_version` and the ETag header name the current one."),
        },
        description=(
            "Create or replace a file. Replacing a text document is an edit that everyone editing it live receives; "
            'with `If-Match: "<version>"` it is refused (412, nothing changed) unless that is the current version.'
        ),
        tags=["files"],
    )
    def put(self, request, project_id: uuid.UUID, path: str):
        access.permission_require(user_id=request.user.pk, project_id=project_id, permission=access.Permission.EDIT)
        kind = request.query_params.get("kind") or None
        expected_version = if_match_number(request.headers.get("If-Match"))
        data = raw_body(request, limit_bytes=max(limits.max_asset_bytes(), limits.max_text_bytes()))
        file, created = services.file_write(
            actor_id=request.user.pk,
            project_id=project_id,
            path=path,
            data=data,
            kind=kind,
            expected_version=expected_version,
        )
        response = Response(
            FileOutputSerializer(file).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )
        response["ETag"] = f'"{file.version}"'
        return response

    @extend_schema(
        operation_id="project_files_move",
        request=FileChangeInputSerializer,
        responses={200: FileOutputSerializer, **FILE_WRITE_ERRORS},
        description="Rename or move the file (`path`; the folders it needs are made, its live editors stay "
        "open), and/or convert a text file kept in another encoding to UTF-8 (`encoding: utf-8`; a declaration "
        "such as `\\usepackage[latin1]{inputenc}` is rewritten to `[utf8]`).",
        tags=["files"],
    )
    def patch(self, request, project_id: uuid.UUID, path: str):
        payload = FileChangeInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        change, actor = payload.validated_data, request.user.pk
        if change.get("encoding"):
            path = services.file_convert_to_utf8(actor_id=actor, project_id=project_id, path=path).path
        if change.get("path"):
            path = services.file_move(actor_id=actor, project_id=project_id, path=path, new_path=change["path"]).path
        return Response(FileOutputSerializer(selectors.file_at(project_id=project_id, path=path)).data)

    @extend_schema(
        operation_id="project_files_destroy",
        responses={204: OpenApiResponse(description="Deleted."), **ERROR_RESPONSES},
        tags=["files"],
    )
    def delete(self, request, project_id: uuid.UUID, path: str):
        services.file_delete(actor_id=request.user.pk, project_id=project_id, path=path)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def get_parsers(self):
        # PATCH carries JSON; PUT carries the raw file.
        if self.request is not None and self.request.method == "PATCH":
            return [BoundedJSONParser()]
        return super().get_parsers()
