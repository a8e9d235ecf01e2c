"""Error pages: JSON in the API's error shape under ``/v1/`` and ``/internal/``, HTML elsewhere."""

from django.shortcuts import render

from config.http.errors import json_error_response

API_PREFIXES = ("/v1/", "/internal/")


def _is_api(request) -> bool:
    return request.path.startswith(API_PREFIXES)


def not_found(request, exception=None):
    if _is_api(request):
        return json_error_response("not_found", "Not found.", 404)
    return render(request, "404.html", status=404)


def server_error(request):
    if _is_api(request):
        return json_error_response("internal_error", "Something went wrong on our side; it has been logged.", 500)
    return render(request, "500.html", status=500)
