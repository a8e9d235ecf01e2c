"""The worker protocol's own URL list, for the lean edge that serves ``/internal/processing/v1/`` (config/asgi.py).

The same paths as in ``config.urls``, so nothing a worker sees changes; resolving against six worker routes
instead of the whole site's list is most of what the edge saves.
"""

from django.urls import include, path

from config.http import pages

urlpatterns = [path("internal/processing/v1/", include("processing.protocol.urls"))]

handler404 = pages.not_found
handler500 = pages.server_error
