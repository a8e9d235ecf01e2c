"""The PDF library API (docs/architecture.md §11): accept versions, read documents, search current versions."""

import uuid

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from foundation.http.bodies import raw_body
from foundation.http.body_limits import body_limit
from foundation.http.openapi import ERROR_RESPONSES, error
from foundation.http.parsers import RawBodyParser
from foundation.http.preconditions import IfMatchInvalid, if_match_number
from foundation.http.ranges import ranged_download
from library import selectors
from library.api.serializers import (
    LibraryAcceptedSerializer,
    LibraryDocumentListSerializer,
    LibraryDocumentSerializer,
    LibrarySearchResultSerializer,
)
from library.exceptions import IfMatchRequired, LibraryVersionInvalid
from library.services.acceptance import Accepted, VersionUpload, library_version_accept
from library.services.pdf_checks import max_pdf_bytes
from processing import facade as processing

PDF_MEDIA_TYPES = ("application/pdf", "application/octet-stream")

UPLOAD_PARAMETERS = [
    processing.IDEMPOTENCY_KEY,
    OpenApiParameter("filename", required=False, description="The PDF's file name (kept with the version)."),
    OpenApiParameter(
        "title", required=False, description="The document's title. A new document without one takes the PDF's "
        "metadata title, else the file name without its extension. On a replacement it renames the document.",
    ),
]  # fmt: skip
ACCEPT_RESPONSES = {
    202: LibraryAcceptedSerializer,
    200: OpenApiResponse(LibraryAcceptedSerializer, description="Idempotent replay: the original version and job."),
    **ERROR_RESPONSES,
    400: error("`not_a_pdf`, `pdf_unreadable`, `pdf_encrypted`, `pdf_empty`, `idempotency_key_invalid`, …"),
    409: error("`idempotency_key_reused`: the key was used for a different upload."),
    413: error("`pdf_too_large`."),
    415: error("Send the raw PDF (application/pdf)."),
    428: error("`idempotency_key_required`, or `if_match_required` on a replacement."),
    429: error("`too_many_active_jobs`; see Retry-After."),
}


def if_match_revision(raw: str | None) -> int:
    """The revision a replacement is based on, from ``If-Match: "<revision>"`` (428 absent, 400 malformed)."""
    revision = if_match_number(raw)
    if revision is None:
        raise IfMatchRequired()
    if revision > 2**31 - 1:  # revisions are 32-bit
        raise IfMatchInvalid(details={"if_match": raw[:100]})
    return revision


def _version_parameter(raw: str | None) -> uuid.UUID | None:
    if not raw:
        return None
    try:
        return uuid.UUID(raw)
    except ValueError as exc:
        raise LibraryVersionInvalid(details={"version": raw[:100]}) from exc


def document_response(view, *, status_code: int = 200) -> Response:
    response = Response(LibraryDocumentSerializer(view).data, status=status_code)
    response["ETag"] = f'"{view.document.revision}"'
    return response


def accepted_response(request, project_id: uuid.UUID, accepted: Accepted) -> Response:
    view = selectors.library_document_for(
        user_id=request.user.pk, project_id=project_id, document_id=accepted.document_id
    )
    job = processing.job_visible(user_id=request.user.pk, job_id=accepted.job_id)
    version = next(version for version in view.document.versions if version.id == accepted.version_id)
    body = LibraryAcceptedSerializer(
        {"document": view, "version": version, "job": job},
        context={"view_of": view, "usernames": {request.user.pk: request.user.get_username()}},
    ).data
    response = Response(body, status=200 if accepted.replayed else 202)
    response["ETag"] = f'"{view.document.revision}"'
    if accepted.replayed:
        response["Idempotent-Replayed"] = "true"
    return response


def _upload(request, project_id: uuid.UUID, document_id: uuid.UUID | None, expected: int | None) -> VersionUpload:
    data = raw_body(request, limit_bytes=max_pdf_bytes(), accept=PDF_MEDIA_TYPES)
    params = request.query_params
    return VersionUpload(project_id, document_id, expected, data, params.get("filename", ""), params.get("title"))


@body_limit(max_pdf_bytes)
class LibraryListCreateApi(APIView):
    parser_classes = [RawBodyParser]

    @extend_schema(
        operation_id="library_documents_list",
        responses={200: LibraryDocumentListSerializer, **ERROR_RESPONSES},
        tags=["library"],
    )
    def get(self, request, project_id: uuid.UUID):
        views = selectors.library_documents_for(user_id=request.user.pk, project_id=project_id)
        return Response({"documents": [LibraryDocumentSerializer(view).data for view in views]})

    @extend_schema(
        operation_id="library_documents_create",
        summary="Add a PDF to the library (its first version; indexing runs later)",
        parameters=UPLOAD_PARAMETERS,
        request={"application/pdf": OpenApiTypes.BINARY},
        responses=ACCEPT_RESPONSES,
        tags=["library"],
    )
    def post(self, request, project_id: uuid.UUID):
        accepted = library_version_accept(
            actor_id=request.user.pk,
            idempotency_key=request.headers.get("Idempotency-Key"),
            upload=_upload(request, project_id, None, None),
        )
        return accepted_response(request, project_id, accepted)


class LibraryDocumentApi(APIView):
    @extend_schema(
        operation_id="library_documents_retrieve",
        description='Served with `ETag: "<revision>"`; send it back as `If-Match` to replace the PDF.',
        responses={200: LibraryDocumentSerializer, **ERROR_RESPONSES},
        tags=["library"],
    )
    def get(self, request, project_id: uuid.UUID, document_id: uuid.UUID):
        view = selectors.library_document_for(user_id=request.user.pk, project_id=project_id, document_id=document_id)
        return document_response(view)


@body_limit(max_pdf_bytes)
class LibraryPdfApi(APIView):
    parser_classes = [RawBodyParser]

    @extend_schema(
        operation_id="library_documents_pdf",
        summary="A version's PDF (the latest accepted version unless `version` names another)",
        parameters=[OpenApiParameter("version", OpenApiTypes.UUID, required=False)],
        description="Streamed, with `ETag` (`If-None-Match` answers 304) and one byte range (`Range`, 206).",
        responses={
            (200, "application/pdf"): OpenApiTypes.BINARY,
            206: OpenApiTypes.BINARY,
            304: None,
            **ERROR_RESPONSES,
        },
        tags=["library"],
    )
    def get(self, request, project_id: uuid.UUID, document_id: uuid.UUID):
        version_id = _version_parameter(request.query_params.get("version"))
        pdf = selectors.library_version_pdf_for(
            user_id=request.user.pk, project_id=project_id, document_id=document_id, version_id=version_id
        )
        return ranged_download(
            request,
            lambda start, length: processing.BlobWindow(pdf.pdf_blob_id, start, length),
            size=pdf.size_bytes,
            etag=f'"{pdf.version_id}"',
            content_type="application/pdf",
            filename=pdf.filename or f"version-{pdf.number}.pdf",
            attachment=False,
        )

    @extend_schema(
        operation_id="library_documents_replace_pdf",
        summary="Replace the document's PDF with a new version, if it is still at the revision you name",
        parameters=[
            *UPLOAD_PARAMETERS,
            OpenApiParameter(
                "If-Match",
                location=OpenApiParameter.HEADER,
                required=True,
                description='The revision your replacement is based on, as `"7"`.',
            ),
        ],
        request={"application/pdf": OpenApiTypes.BINARY},
        responses={
            **ACCEPT_RESPONSES,
            412: error("`revision_mismatch`: `details.current_revision` and the ETag header name the current one."),
        },
        tags=["library"],
    )
    def put(self, request, project_id: uuid.UUID, document_id: uuid.UUID):
        expected = if_match_revision(request.headers.get("If-Match"))
        accepted = library_version_accept(
            actor_id=request.user.pk,
            idempotency_key=request.headers.get("Idempotency-Key"),
            upload=_upload(request, project_id, document_id, expected),
        )
        return accepted_response(request, project_id, accepted)


class LibrarySearchApi(APIView):
    @extend_schema(
        operation_id="library_search",
        parameters=[
            OpenApiParameter(
                "q",
                required=True,
                description='Words, "quoted phrases", `or`, `-excluded` (web-search syntax); at most 500 characters.',
            ),
            OpenApiParameter("limit", OpenApiTypes.INT, required=False, description="1–50, default 20."),
        ],
        responses={200: LibrarySearchResultSerializer, **ERROR_RESPONSES},
        tags=["library"],
    )
    def get(self, request, project_id: uuid.UUID):
        query = request.query_params.get("q", "")
        try:
            limit = int(request.query_params.get("limit", 20))
        except ValueError:
            limit = 20
        hits = selectors.library_search_for(user_id=request.user.pk, project_id=project_id, query=query, limit=limit)
        return Response(LibrarySearchResultSerializer({"query": query.strip(), "hits": hits}).data)


__all__ = ["LibraryDocumentApi", "LibraryListCreateApi", "LibraryPdfApi", "LibrarySearchApi"]
