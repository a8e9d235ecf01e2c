"""``/metrics``: Prometheus figures for every context (the default registry each app adds to).

Served to loopback clients and staff sessions; ``QUIRE_METRICS_PUBLIC`` opens
it to anyone who can reach the server (behind a private network). Processing
figures come from the database, so any process shows them all; Office figures
are per server process.
"""

import ipaddress

from django.conf import settings
from django.http import HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from config.http.errors import json_error_response


def metrics_view(request):
    user = getattr(request, "user", None)
    allowed = (
        settings.QUIRE_METRICS_PUBLIC
        or _is_loopback(request.META.get("REMOTE_ADDR", ""))
        or (user is not None and user.is_authenticated and user.is_staff)
    )
    if not allowed:
        return json_error_response("not_found", "Not found.", 404)
    from processing import facade as processing

    processing.collector_register()
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False
