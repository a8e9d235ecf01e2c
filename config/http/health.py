"""``GET /healthz``: whether this replica can serve, for a load balancer's health check.

Two checks, both this process's own: its database connection answers, and its listener for PostgreSQL's
NOTIFY wake-ups is connected (without it, long-polls and claims fall back to polling and answer late). 200
with ``{"status": "ok"}`` when both hold, otherwise 503 with ``code: replica_unhealthy`` and which check
failed. No session, no sign-in: the request carries no cookie, so no middleware reads the database for it.
"""

from django.db import DatabaseError, connection
from django.http import HttpResponseNotAllowed, JsonResponse

from processing import facade as processing

LISTENER_WAIT_SECONDS = 1.0


def healthz(request):
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    checks = {"database": _database(), "wakeups": _wakeups()}
    if all(state in ("ok", "listening") for state in checks.values()):
        return JsonResponse({"status": "ok", "checks": checks})
    return JsonResponse({"status": "unavailable", "code": "replica_unhealthy", "checks": checks}, status=503)


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return "unreachable"
    return "ok"


def _wakeups() -> str:
    return "listening" if processing.wakeup_listener_ready(timeout=LISTENER_WAIT_SECONDS) else "not listening"
