"""The Overview (processing/upkeep/overview.py) and its charts' data, mounted under the job list's URLs, and
its switches: pause or resume an operation, drain a worker session.

A switch is POST only and only for an acting operator: a read-only one is refused here, not only shown no
button.
"""

import uuid

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseBadRequest, HttpResponseNotAllowed, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse

from foundation.errors import QuireError
from operators import facade as operators
from processing.kernel.clock import db_now
from processing.queue.pauses import operation_pause, operation_resume
from processing.upkeep.alerts import operator_alerts
from processing.upkeep.charts import WINDOWS, chart_data
from processing.upkeep.fleet import session_drain_by_operator
from processing.upkeep.overview import processing_overview


def overview_urls(model_admin) -> list:
    def view(route: str, function, name: str):
        return path(route, model_admin.admin_site.admin_view(lambda request: function(model_admin, request)), name=name)

    return [
        view("overview/", overview_page, "processing_overview"),
        view("overview/act/", overview_act, "processing_overview_act"),
        view("overview/charts/", overview_charts, "processing_overview_charts"),
    ]


def overview_page(model_admin, request):
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    context = {
        **model_admin.admin_site.each_context(request),
        "title": "Processing overview",
        "opts": model_admin.model._meta,
        "overview": processing_overview(),
        "alerts": operator_alerts(),
        "can_act": operators.can_act(request.user),
    }
    live_only = request.GET.get("part") == "live"  # the page's own refresh (htmx), every few seconds
    template = "admin/processing/overview_live.html" if live_only else "admin/processing/overview.html"
    return TemplateResponse(request, template, context)


def overview_charts(model_admin, request):
    """The charts' figures for one window, from the rollups (processing/upkeep/charts.py)."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    window = request.GET.get("window", "1h")
    if window not in WINDOWS:
        return JsonResponse({"code": "window_unknown", "windows": list(WINDOWS)}, status=400)
    return JsonResponse(chart_data(window, db_now()).as_json())


def overview_act(model_admin, request):
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if not operators.can_act(request.user):
        raise PermissionDenied
    action, target = request.POST.get("action", ""), request.POST.get("target", "")
    try:
        message = _switches[action](request.user, target)
    except KeyError:
        return HttpResponseBadRequest("unknown action")
    except (QuireError, ValueError) as exc:
        message, level = getattr(exc, "message", str(exc)), messages.ERROR
    else:
        level = messages.SUCCESS
    model_admin.message_user(request, message, level)
    return HttpResponseRedirect(reverse("admin:processing_overview"))


def _pause(actor, operation: str) -> str:
    done = operation_pause(actor=actor, operation=operation)
    # Messages are shown with a capital first letter: an operation's name does not start one.
    return f"Paused {operation}: no new claims; running jobs finish." if done else f"Already paused: {operation}."


def _resume(actor, operation: str) -> str:
    done = operation_resume(actor=actor, operation=operation)
    return f"Resumed {operation}." if done else f"Not paused: {operation}."


def _drain(actor, session_id: str) -> str:
    done = session_drain_by_operator(actor=actor, session_id=uuid.UUID(session_id))
    return (
        "Session draining: no new claims; it ends when its running jobs have finished."
        if done
        else "That session was not active."
    )


_switches = {"pause": _pause, "resume": _resume, "drain": _drain}
