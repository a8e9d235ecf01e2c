import uuid

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from collaboration import services
from collaboration.exceptions import UpdateTooLarge
from foundation.http.bodies import raw_body
from foundation.http.body_limits import body_limit
from foundation.http.openapi import ERROR_RESPONSES, error
from foundation.http.parsers import RawBodyParser

YJS_MEDIA_TYPES = ("application/octet-stream",)

AcceptedSerializer = inline_serializer(
    name="AcceptedUpdate",
    fields={
        "seq": serializers.IntegerField(),
        "text_sha256": serializers.CharField(),
        "changed": serializers.BooleanField(),
    },
)


@body_limit(services.max_update_bytes, too_large=UpdateTooLarge)
class DocumentUpdateApi(APIView):
    parser_classes = [RawBodyParser]

    @extend_schema(
        operation_id="document_updates_create",
        description="Accept one binary Yjs update (v1 encoding) for the document's shared text `content`.",
        request={"application/octet-stream": OpenApiTypes.BINARY},
        responses={
            200: AcceptedSerializer,
            **ERROR_RESPONSES,
            413: error("`update_too_large`, or `document_too_large`: the text would exceed a document's limit."),
            415: error("Send application/octet-stream."),
        },
        tags=["documents"],
    )
    def post(self, request, project_id: uuid.UUID, path: str):
        update = raw_body(
            request, limit_bytes=services.max_update_bytes(), accept=YJS_MEDIA_TYPES, too_large=UpdateTooLarge
        )
        stored = services.update_accept_and_project(
            actor_id=request.user.pk, project_id=project_id, path=path, update=update
        )
        return Response({"seq": stored.last_seq, "text_sha256": stored.text_sha256, "changed": stored.changed})


class DocumentStateApi(APIView):
    @extend_schema(
        operation_id="document_state_retrieve",
        description="The document's full Yjs state as one update, for a client to start from.",
        responses={(200, "application/octet-stream"): OpenApiTypes.BINARY, **ERROR_RESPONSES},
        tags=["documents"],
    )
    def get(self, request, project_id: uuid.UUID, path: str):
        state = services.state_read(actor_id=request.user.pk, project_id=project_id, path=path)
        return HttpResponse(state, content_type="application/octet-stream")
