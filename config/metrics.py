"""``/metrics`` in Prometheus text format, for every context's figures.

Open to loopback clients and staff sessions by default; ``QUIRE_METRICS_PUBLIC``
opens it to anyone who can reach the server (behind a private network).
"""

from django.conf import settings
from django.http import HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

LOOPBACK = {"127.0.0.1", "::1"}


def metrics(request):
    allowed = (
        getattr(settings, "QUIRE_METRICS_PUBLIC", False)
        or request.META.get("REMOTE_ADDR") in LOOPBACK
        or (request.user.is_authenticated and request.user.is_staff)
    )
    if not allowed:
        return HttpResponse("Forbidden", status=403, content_type="text/plain")
    from processing.metrics import collector_register

    collector_register()
    return HttpResponse(generate_latest(), content_type=CONTENT_TYPE_LATEST)
