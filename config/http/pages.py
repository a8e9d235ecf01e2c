"""Error pages: JSON in the API's error shape under ``/v1/`` and ``/internal/``, HTML elsewhere.

A request that fails because the database cannot be reached (connection refused, lost, or no pooled
connection in time) is not a bug of ours: it answers 503 with ``Retry-After`` rather than 500. Django calls
``server_error`` inside the ``except`` that caught the failure, wherever it was raised (view, middleware,
session save), so the exception is the one ``sys.exc_info`` holds.
"""

import sys

from django.shortcuts import render

from foundation.http.errors import database_unavailable_response, database_unreachable, json_error_response

API_PREFIXES = ("/v1/", "/internal/")


def _is_api(request) -> bool:
    return request.path.startswith(API_PREFIXES)


def not_found(request, exception=None):
    if _is_api(request):
        return json_error_response("not_found", "Not found.", 404)
    return render(request, "404.html", status=404)


RETRY_AFTER_SECONDS = 5  # a page refreshes itself after this; the API's own 503 (foundation/http/errors.py) says 1


def server_error(request):
    if database_unreachable(sys.exc_info()[1]):
        return database_unavailable(request)
    if _is_api(request):
        return json_error_response("internal_error", "Something went wrong on our side; it has been logged.", 500)
    return render(request, "500.html", status=500)


def database_unavailable(request):
    if _is_api(request):
        return database_unavailable_response()
    response = render(request, "503.html", {"retry_after": RETRY_AFTER_SECONDS}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response
