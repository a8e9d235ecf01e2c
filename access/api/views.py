import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from access import selectors, services
from access.api.serializers import MemberOutputSerializer, MemberSetInputSerializer
from access.models import Permission
from foundation.http.openapi import ERROR_RESPONSES, error


class MemberListApi(APIView):
    @extend_schema(
        operation_id="project_members_list",
        responses={200: MemberOutputSerializer(many=True), **ERROR_RESPONSES},
        tags=["members"],
    )
    def get(self, request, project_id: uuid.UUID):
        services.permission_require(user_id=request.user.pk, project_id=project_id, permission=Permission.VIEW)
        grants = selectors.grants_of_project(project_id=project_id)
        data = [{"username": grant.user.username, "role": grant.role} for grant in grants]
        return Response(MemberOutputSerializer(data, many=True).data)

    @extend_schema(
        operation_id="project_members_set",
        request=MemberSetInputSerializer,
        responses={200: MemberOutputSerializer, 201: MemberOutputSerializer, **ERROR_RESPONSES},
        tags=["members"],
    )
    def post(self, request, project_id: uuid.UUID):
        payload = MemberSetInputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        grant, created = services.member_set(actor_id=request.user.pk, project_id=project_id, **payload.validated_data)
        body = MemberOutputSerializer({"username": grant.user.username, "role": grant.role}).data
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class MemberDeleteApi(APIView):
    @extend_schema(
        operation_id="project_members_remove",
        responses={204: None, **ERROR_RESPONSES, 409: error("`last_owner`: a project keeps at least one owner.")},
        tags=["members"],
    )
    def delete(self, request, project_id: uuid.UUID, username: str):
        services.member_remove(actor_id=request.user.pk, project_id=project_id, username=username)
        return Response(status=status.HTTP_204_NO_CONTENT)
