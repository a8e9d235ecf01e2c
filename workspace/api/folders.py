"""Folders over HTTP: made, renamed or moved with everything in them, and deleted; each one fenced change."""

import uuid

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from foundation.http.openapi import ERROR_RESPONSES, error
from workspace import services
from workspace.api.flags import query_flag
from workspace.api.serializers import FolderInputSerializer, FolderOutputSerializer

CLASH = error("`path_conflict`: a file has that name, or a name that differs only in case (`details.clashes_with`).")


class FolderCreateApi(APIView):
    @extend_schema(
        operation_id="project_folders_create",
        request=FolderInputSerializer,
        responses={201: FolderOutputSerializer, **ERROR_RESPONSES, 409: CLASH},
        description="Make a folder (and the folders it sits in). Making one that exists changes nothing (201).",
        tags=["files"],
    )
    def post(self, request, project_id: uuid.UUID):
        payload = FolderInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        made = services.folder_create(
            actor_id=request.user.pk, project_id=project_id, path=payload.validated_data["path"]
        )
        return Response(FolderOutputSerializer(made).data, status=status.HTTP_201_CREATED)


class FolderDetailApi(APIView):
    @extend_schema(
        operation_id="project_folders_move",
        request=FolderInputSerializer,
        responses={200: FolderOutputSerializer, **ERROR_RESPONSES, 409: CLASH},
        description="Rename or move the folder with everything in it, in one change (a capture sees all of it "
        "or none). Documents open in editors stay open under their new paths.",
        tags=["files"],
    )
    def patch(self, request, project_id: uuid.UUID, path: str):
        payload = FolderInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        moved = services.folder_move(
            actor_id=request.user.pk, project_id=project_id, path=path, new_path=payload.validated_data["path"]
        )
        return Response(FolderOutputSerializer(moved).data)

    @extend_schema(
        operation_id="project_folders_destroy",
        parameters=[OpenApiParameter("recursive", OpenApiTypes.BOOL, required=False)],
        responses={
            204: None,
            **ERROR_RESPONSES,
            409: error("`folder_not_empty` (`details.files`, `details.folders`): send `?recursive=true`."),
        },
        tags=["files"],
    )
    def delete(self, request, project_id: uuid.UUID, path: str):
        recursive = query_flag(request, "recursive")
        services.folder_delete(actor_id=request.user.pk, project_id=project_id, path=path, recursive=recursive)
        return Response(status=status.HTTP_204_NO_CONTENT)
