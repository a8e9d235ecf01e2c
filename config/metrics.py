"""``/metrics``: Prometheus figures for every context (the default registry each app adds to).

Served to loopback clients and staff sessions; ``QUIRE_METRICS_PUBLIC`` opens
it to anyone who can reach the server (behind a private network). Processing
figures come from the database, so any process shows them all; Office figures
are per server process. ``quire_database_up`` says whether this process reaches
its database; when it does not, the scrape still answers 200 with the figures
that need no database (a 503 would make Prometheus drop them all).
"""

import ipaddress

from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from prometheus_client.core import GaugeMetricFamily

from foundation.http.errors import json_error_response


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

    _database_up_register()
    processing.collector_register()
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


class DatabaseUpCollector:
    def collect(self):
        up = GaugeMetricFamily("quire_database_up", "1 when this process reaches its database, 0 when it does not.")
        up.add_metric([], 1 if _database_reachable() else 0)
        yield up


def _database_reachable() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return False
    return True


_registered = False


def _database_up_register() -> None:
    global _registered
    if not _registered:
        REGISTRY.register(DatabaseUpCollector())
        _registered = True
