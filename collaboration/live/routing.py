"""The live editing sockets' URLs (the ASGI application routes WebSockets here)."""

from django.urls import path

from collaboration.live.consumer import DocumentConsumer
from collaboration.live.project_consumer import ProjectEventsConsumer

websocket_urlpatterns = [
    path("ws/projects/<uuid:project_id>/documents/<int:file_id>", DocumentConsumer.as_asgi()),
    path("ws/projects/<uuid:project_id>/events", ProjectEventsConsumer.as_asgi()),
]
