import math
import time
import uuid
from collections.abc import Callable

from django.conf import settings
from django.db import connection
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from access import facade as access
from foundation.http.bodies import raw_body
from foundation.http.body_limits import body_limit
from foundation.http.openapi import ERROR_RESPONSES, error
from foundation.http.parsers import RawBodyParser
from foundation.http.ranges import ranged_download
from processing import selectors
from processing.api.serializers import (
    BuildInputSerializer,
    CapabilitiesSerializer,
    DiagnosticsSerializer,
    JobPageSerializer,
    JobSerializer,
)
from processing.exceptions import InvalidOptions
from processing.kernel import capabilities
from processing.kernel.blobs import BlobWindow
from processing.kernel.configuration import limits
from processing.operations.builds import build_operation_for
from processing.queue.cancellation import job_cancel
from processing.queue.wakeups import wakeups
from processing.submission.submit import Submitted, Upload, job_submit
from workspace import facade as workspace

IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    location=OpenApiParameter.HEADER,
    required=True,
    description="1–128 printable ASCII characters, scoped to you and this endpoint. The same key with "
    "the same command returns the original job (200, `Idempotent-Replayed: true`); another command, 409.",
)
SUBMIT_RESPONSES = {
    202: JobSerializer,
    200: OpenApiResponse(JobSerializer, description="Idempotent replay of an earlier submission."),
    **ERROR_RESPONSES,
    409: error("`idempotency_key_reused`: the key was used for a different command."),
    428: error("`idempotency_key_required`."),
    429: error("`too_many_active_jobs` for you or this project; see Retry-After."),
    503: error("`queue_full`; see Retry-After."),
}


def _requester_names(caller) -> dict:
    """Jobs are visible only to their requester (another's is a 404), so the caller names every job
    it is shown, without a lookup (a poll is the hottest read there is)."""
    return {"usernames": {caller.pk: caller.username}}


def job_response(job, caller, *, status_code: int = 200, replayed: bool = False) -> Response:
    response = Response(JobSerializer(job, context=_requester_names(caller)).data, status=status_code)
    if replayed:
        response["Idempotent-Replayed"] = "true"
    return response


def submitted_response(submitted: Submitted, caller) -> Response:
    job = selectors.job_visible(user_id=caller.pk, job_id=submitted.job_id)
    if submitted.replayed:
        return job_response(job, caller, status_code=200, replayed=True)
    return job_response(job, caller, status_code=202)


class BuildCreateApi(APIView):
    @extend_schema(
        operation_id="project_builds_create",
        summary="Build the project to PDF (latex.compile.pdf/v1 or typst.compile.pdf/v1, by its type)",
        parameters=[IDEMPOTENCY_KEY],
        request=BuildInputSerializer,
        responses=SUBMIT_RESPONSES,
        tags=["processing"],
    )
    def post(self, request, project_id: uuid.UUID):
        if not isinstance(request.data, dict):
            raise InvalidOptions("Options must be a JSON object.")
        operation = build_operation_for(project_id=project_id)
        version = request.data.get("version")
        if isinstance(version, int) and not isinstance(version, bool):  # a version that exists, asked by a member
            access.permission_require(user_id=request.user.pk, project_id=project_id, permission=access.Permission.VIEW)
            workspace.version_require(project_id=project_id, number=version)
        submitted = job_submit(
            actor_id=request.user.pk,
            operation_name=operation,
            idempotency_key=request.headers.get("Idempotency-Key"),
            project_id=project_id,
            options=dict(request.data),
        )
        return submitted_response(submitted, request.user)


class PptxExportCreateApi(APIView):
    @extend_schema(
        operation_id="project_exports_pptx_create",
        summary="Export the Typst project to PPTX (typst.export.pptx/v1)",
        parameters=[IDEMPOTENCY_KEY],
        request=None,
        responses=SUBMIT_RESPONSES,
        tags=["processing"],
    )
    def post(self, request, project_id: uuid.UUID):
        submitted = job_submit(
            actor_id=request.user.pk,
            operation_name="typst.export.pptx/v1",
            idempotency_key=request.headers.get("Idempotency-Key"),
            project_id=project_id,
        )
        return submitted_response(submitted, request.user)


PPTX_MEDIA_TYPES = (
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/octet-stream",
)


@body_limit(lambda: limits().input_bytes)
class PptxImportCreateApi(APIView):
    parser_classes = [RawBodyParser]

    @extend_schema(
        operation_id="imports_pptx_create",
        summary="Import a PPTX into a new Typst project (pptx.import.typst/v1)",
        parameters=[
            IDEMPOTENCY_KEY,
            OpenApiParameter("filename", required=True, description="The presentation's file name."),
            OpenApiParameter("input_profile", required=False, description="A profile the distribution declares."),
        ],
        request={PPTX_MEDIA_TYPES[0]: OpenApiTypes.BINARY},
        responses={
            **SUBMIT_RESPONSES,
            413: error("Larger than the input limit."),
            415: error("Not a PPTX body."),
        },
        tags=["processing"],
    )
    def post(self, request):
        filename = (request.query_params.get("filename") or "").strip()[:255]
        if not filename:
            raise InvalidOptions("Say the presentation's file name with ?filename=.")
        profile = request.query_params.get("input_profile")
        data = raw_body(request, limit_bytes=limits().input_bytes, accept=PPTX_MEDIA_TYPES)
        submitted = job_submit(
            actor_id=request.user.pk,
            operation_name="pptx.import.typst/v1",
            idempotency_key=request.headers.get("Idempotency-Key"),
            options={"input_profile": profile} if profile else None,
            upload=Upload(data=data, filename=filename),
        )
        return submitted_response(submitted, request.user)


class CapabilitiesApi(APIView):
    @extend_schema(operation_id="processing_capabilities", responses={200: CapabilitiesSerializer}, tags=["processing"])
    def get(self, request):
        return Response(CapabilitiesSerializer({"capabilities": capabilities.capabilities_list()}).data)


class ProjectCapabilitiesApi(APIView):
    @extend_schema(
        operation_id="project_processing_capabilities",
        responses={200: CapabilitiesSerializer, **ERROR_RESPONSES},
        tags=["processing"],
    )
    def get(self, request, project_id: uuid.UUID):
        from workspace import facade as workspace

        access.permission_require(user_id=request.user.pk, project_id=project_id, permission=access.Permission.VIEW)
        project = workspace.project_describe(project_id=project_id)
        if project is None:
            raise access.ProjectNotFound()
        items = capabilities.capabilities_list(project_type=project.type)
        return Response(CapabilitiesSerializer({"capabilities": items}).data)


class JobListApi(APIView):
    @extend_schema(
        operation_id="processing_jobs_list",
        parameters=[
            OpenApiParameter("state", enum=["active", "terminal"], required=False),
            OpenApiParameter("project_id", OpenApiTypes.UUID, required=False),
            OpenApiParameter("operation", required=False),
            OpenApiParameter("cursor", required=False),
            OpenApiParameter("limit", OpenApiTypes.INT, required=False, description="1–100, default 50."),
        ],
        responses={200: JobPageSerializer, **ERROR_RESPONSES},
        tags=["processing"],
    )
    def get(self, request):
        params = request.query_params
        state = params.get("state")
        if state not in (None, "active", "terminal"):
            raise InvalidOptions("state is active or terminal.")
        try:
            project_id = uuid.UUID(params["project_id"]) if params.get("project_id") else None
            limit = int(params.get("limit", 50))
        except ValueError as exc:
            raise InvalidOptions("project_id must be a UUID and limit a number.") from exc
        jobs, next_cursor = selectors.jobs_visible_to(
            user_id=request.user.pk,
            state=state,
            project_id=project_id,
            operation=params.get("operation"),
            cursor=params.get("cursor"),
            limit=limit,
        )
        context = _requester_names(request.user)
        return Response({"jobs": JobSerializer(jobs, many=True, context=context).data, "next_cursor": next_cursor})


WAIT_SECONDS_MAX = 30


def _wait_seconds(raw: str | None) -> float:
    if raw is None:
        return 0.0
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= WAIT_SECONDS_MAX:  # NaN fails this too
        raise InvalidOptions(f"wait is a number of seconds from 0 to {WAIT_SECONDS_MAX}.")
    return seconds


def job_when_ended(
    *, user_id: int, job_id: uuid.UUID, wait_seconds: float, still_signed_in: Callable[[], bool] = lambda: True
):
    """The job once it has ended, or as it is after ``wait_seconds``; woken by the job-ended NOTIFY, not polled.

    A wait outlives the request's authentication: every access-check interval it asks ``still_signed_in`` and
    ends with ``not_authenticated`` once the caller signed out, was deactivated or lost the token."""
    deadline = time.monotonic() + wait_seconds
    with wakeups.job_watch(job_id) as watch:
        while True:
            job = selectors.job_visible(user_id=user_id, job_id=job_id)
            remaining = deadline - time.monotonic()
            if job.is_terminal or remaining <= 0:
                return job
            if not connection.in_atomic_block:
                connection.close()  # hold no database connection while waiting: many clients may wait at once
            watch.wait(min(remaining, settings.COLLAB_ACCESS_CHECK_SECONDS))
            if not still_signed_in():
                raise NotAuthenticated("You were signed out while waiting.")


def _still_signed_in(request) -> Callable[[], bool]:
    """Whether the credentials this request came with would still authenticate it (a token or a session)."""
    user_id, token_id = request.user.pk, getattr(request.auth, "pk", None)
    session_key = None if token_id is not None else request.session.session_key
    return lambda: access.still_signed_in(user_id=user_id, session_key=session_key, token_id=token_id)


class JobDetailApi(APIView):
    @extend_schema(
        operation_id="processing_jobs_retrieve",
        parameters=[
            OpenApiParameter(
                "wait",
                OpenApiTypes.NUMBER,
                required=False,
                description=f"Seconds (0–{WAIT_SECONDS_MAX}) to hold the answer while the job has not ended; "
                "it comes as soon as the job ends, or with the job as it is when the time is up.",
            )
        ],
        responses={200: JobSerializer, **ERROR_RESPONSES},
        tags=["processing"],
    )
    def get(self, request, job_id: uuid.UUID):
        wait_seconds = _wait_seconds(request.query_params.get("wait"))
        if not wait_seconds:
            return job_response(selectors.job_visible(user_id=request.user.pk, job_id=job_id), request.user)
        return job_response(
            job_when_ended(
                user_id=request.user.pk,
                job_id=job_id,
                wait_seconds=wait_seconds,
                still_signed_in=_still_signed_in(request),
            ),
            request.user,
        )


class JobCancelApi(APIView):
    @extend_schema(
        operation_id="processing_jobs_cancel",
        request=None,
        responses={200: JobSerializer, **ERROR_RESPONSES},
        tags=["processing"],
    )
    def post(self, request, job_id: uuid.UUID):
        return job_response(job_cancel(actor_id=request.user.pk, job_id=job_id), request.user)


class ArtifactDownloadApi(APIView):
    @extend_schema(
        operation_id="processing_artifacts_download",
        responses={(200, "*/*"): OpenApiTypes.BINARY, 206: OpenApiTypes.BINARY, 304: None, **ERROR_RESPONSES},
        description="The artifact's bytes, served with its own media type: streamed, with `ETag` (`If-None-Match` "
        "answers 304) and one byte range (`Range`, 206).",
        tags=["processing"],
    )
    def get(self, request, job_id: uuid.UUID, artifact_id: uuid.UUID):
        artifact = selectors.artifact_visible(user_id=request.user.pk, job_id=job_id, artifact_id=artifact_id)
        return ranged_download(
            request,
            lambda start, length: BlobWindow(artifact.blob_id, start, length),
            size=artifact.size_bytes,
            etag=f'"{artifact.sha256}"',
            content_type=artifact.media_type,
            filename=_safe_filename(artifact.filename),
            attachment=True,
        )


def _safe_filename(name: str) -> str:
    return "".join(char if char.isalnum() or char in "._- " else "_" for char in name)[:200] or "artifact"


class JobDiagnosticsApi(APIView):
    @extend_schema(
        operation_id="processing_jobs_diagnostics",
        description="The job's bounded log as text/plain; with `Accept: application/json`, "
        "the log and the structured entries `[{file, line, severity, message}]`.",
        responses={
            (200, "text/plain"): OpenApiTypes.STR,
            (200, "application/json"): DiagnosticsSerializer,
            **ERROR_RESPONSES,
        },
        tags=["processing"],
    )
    def get(self, request, job_id: uuid.UUID):
        job = selectors.job_visible(user_id=request.user.pk, job_id=job_id)
        if "application/json" in request.headers.get("Accept", ""):
            return Response({"log": job.diagnostic_log, "entries": job.diagnostics})
        return HttpResponse(job.diagnostic_log, content_type="text/plain; charset=utf-8", status=status.HTTP_200_OK)


class EchoCreateApi(APIView):
    """``test.echo/v1`` submissions, routed only when QUIRE_TEST_OPERATIONS is on (load tests, the soak)."""

    @extend_schema(exclude=True)
    def post(self, request, project_id: uuid.UUID):
        submitted = job_submit(
            actor_id=request.user.pk,
            operation_name="test.echo/v1",
            idempotency_key=request.headers.get("Idempotency-Key"),
            project_id=project_id,
        )
        return submitted_response(submitted, request.user)
