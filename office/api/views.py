import posixpath
import uuid

from django.http import HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from foundation.http.openapi import ERROR_RESPONSES, error
from office import services
from office.api.asyncapi import AsyncApiView
from office.api.serializers import InspectionOutputSerializer

PREVIEW_ERRORS = {
    **ERROR_RESPONSES,
    409: error("The file changed while its preview was being made; ask again."),
    413: error("The file is larger than the Office preview accepts."),
    415: error("Only .docx, .xlsx, .pptx, .odt, .ods and .odp files have an Office preview."),
    422: error("LibreOffice could not convert the file, or its PDF would be too large."),
    503: error("The converter is busy or unavailable; retry shortly."),
    504: error("The conversion took longer than allowed and was stopped."),
}


class FilePreviewApi(AsyncApiView):
    @extend_schema(
        operation_id="project_files_preview",
        summary="The Office file as PDF",
        description="Converts .docx .xlsx .pptx .odt .ods .odp on a shared warm LibreOffice; "
        "a client that disconnects stops waiting (and the conversion, if nobody else waits for it).",
        responses={(200, "application/pdf"): OpenApiTypes.BINARY, **PREVIEW_ERRORS},
        tags=["files"],
    )
    async def get(self, request, project_id: uuid.UUID, path: str):
        preview = await services.preview_get(user_id=request.user.pk, project_id=project_id, path=path)
        response = HttpResponse(preview.pdf, content_type="application/pdf")
        name = posixpath.splitext(posixpath.basename(path))[0] + ".pdf"
        response["Content-Disposition"] = content_disposition_header(False, name)
        response["Cache-Control"] = "private, no-cache"
        response["X-Content-Type-Options"] = "nosniff"
        response["X-Frame-Options"] = "SAMEORIGIN"  # the project page shows it in an iframe
        response["X-Office-Converter-Generation"] = str(preview.generation)
        response["X-Office-Cache"] = "hit" if preview.cache_hit else "miss"
        return response


class FileInspectionApi(AsyncApiView):
    @extend_schema(
        operation_id="project_files_inspection",
        summary="Page count of the Office file's PDF",
        description="An explicit (foreground) inspection: shares the conversion and cache of the preview.",
        responses={200: InspectionOutputSerializer, **PREVIEW_ERRORS},
        tags=["files"],
    )
    async def get(self, request, project_id: uuid.UUID, path: str):
        preview = await services.preview_get(user_id=request.user.pk, project_id=project_id, path=path)
        body = {
            "page_count": preview.page_count,
            "converter_generation": preview.generation,
            "source_sha256": preview.source_sha256,
            "cache_hit": preview.cache_hit,
        }
        return Response(InspectionOutputSerializer(body).data)
