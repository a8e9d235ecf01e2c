"""One error shape for every API response: ``{"error": {"code", "message", "details"}}``."""

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404, JsonResponse, UnreadablePostError
from rest_framework import exceptions as drf
from rest_framework.response import Response

from foundation.errors import QuireError

logger = logging.getLogger(__name__)

_DRF_CODES: list[tuple[type[Exception], str]] = [
    (drf.NotAuthenticated, "not_authenticated"),
    (drf.AuthenticationFailed, "authentication_failed"),
    (drf.PermissionDenied, "permission_denied"),
    (drf.NotFound, "not_found"),
    (drf.MethodNotAllowed, "method_not_allowed"),
    (drf.NotAcceptable, "not_acceptable"),
    (drf.UnsupportedMediaType, "unsupported_media_type"),
    (drf.Throttled, "throttled"),
    (drf.ParseError, "malformed_request"),
    (drf.ValidationError, "validation_error"),
]


def error_body(code: str, message: str, details: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def exception_handler(exc: Exception, context: dict) -> Response | None:
    """DRF's exception hook: map every anticipated failure to the one error shape."""
    if isinstance(exc, QuireError):
        return Response(error_body(exc.code, exc.message, exc.details), status=exc.status_code, headers=exc.headers)
    if isinstance(exc, Http404):
        return Response(error_body("not_found", "Not found."), status=404)
    if isinstance(exc, DjangoPermissionDenied):
        return Response(error_body("permission_denied", "You may not do that."), status=403)
    if isinstance(exc, UnreadablePostError):  # the client left mid-body: nobody reads this answer
        return Response(error_body("body_incomplete", "The request body ended before its length."), status=400)
    if isinstance(exc, RequestDataTooBig):
        return Response(error_body("payload_too_large", str(exc)), status=413)
    if isinstance(exc, SuspiciousOperation):
        return Response(error_body("bad_request", str(exc)), status=400)
    if database_unreachable(exc):
        logger.warning("database unavailable during request", exc_info=exc)
        return Response(DATABASE_UNAVAILABLE, status=503, headers={"Retry-After": DATABASE_RETRY_AFTER})
    if isinstance(exc, drf.APIException):
        return _drf_response(exc)
    return None


# The API's and the worker protocol's answer when the database is out of reach, from a DRF view or from
# anywhere else in the request (config/http/pages.py): clients and agents retry after a second.
DATABASE_UNAVAILABLE = error_body("database_unavailable", "The database is unavailable; retry shortly.")
DATABASE_RETRY_AFTER = "1"


def database_unavailable_response() -> JsonResponse:
    response = JsonResponse(DATABASE_UNAVAILABLE, status=503)
    response["Retry-After"] = DATABASE_RETRY_AFTER
    return response


def database_unreachable(exc: BaseException | None) -> bool:
    """Whether ``exc`` says the database is out of reach (refused, lost, terminated), not that a query is wrong."""
    return isinstance(exc, OperationalError | InterfaceError) or (
        isinstance(exc, DatabaseError) and "terminating connection" in str(exc)
    )


def _drf_response(exc: drf.APIException) -> Response:
    code = next((name for cls, name in _DRF_CODES if isinstance(exc, cls)), "error")
    if isinstance(exc, drf.ValidationError):
        details = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        body = error_body(code, "The request is not valid.", details)
    else:
        body = error_body(code, str(exc.detail))
    response = Response(body, status=exc.status_code)
    if isinstance(exc, drf.Throttled) and exc.wait:
        response["Retry-After"] = str(int(exc.wait))
    return response


def json_error_response(code: str, message: str, status: int, details: dict | None = None) -> JsonResponse:
    return JsonResponse(error_body(code, message, details), status=status)
