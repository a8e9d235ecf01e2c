"""``/metrics``: this process's Prometheus figures (the default registry every app adds to).

Served to loopback clients only unless ``QUIRE_METRICS_PUBLIC`` is true.
"""

import ipaddress

from django.conf import settings
from django.http import HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from config.http.errors import json_error_response


def metrics_view(request):
    if not settings.QUIRE_METRICS_PUBLIC and not _is_loopback(request.META.get("REMOTE_ADDR", "")):
        return json_error_response("not_found", "Not found.", 404)
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
