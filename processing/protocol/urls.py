import re

from django.urls import path
from drf_spectacular.views import SpectacularAPIView

import quire_wire
from processing.protocol import views

SCHEMA_SETTINGS = {
    "TITLE": "Quire worker protocol",
    "DESCRIPTION": "The internal protocol worker agents speak with Core. See docs/worker-protocol.md.",
    "VERSION": "1",
    "SCHEMA_PATH_PREFIX": re.escape(quire_wire.PROTOCOL_PREFIX),
    "PREPROCESSING_HOOKS": ["config.http.schema.worker_endpoints_only"],
}

urlpatterns = [
    path("sessions", views.SessionRegisterApi.as_view()),
    path("sessions/<uuid:session_id>/heartbeat", views.SessionHeartbeatApi.as_view()),
    path("sessions/<uuid:session_id>/drain", views.SessionDrainApi.as_view()),
    path("sessions/<uuid:session_id>/acquire", views.AcquireApi.as_view()),
    path("sessions/<uuid:session_id>/cancellations", views.CancellationsApi.as_view()),
    path("claims/<uuid:claim_id>/heartbeat", views.ClaimHeartbeatApi.as_view()),
    path("claims/<uuid:claim_id>/uploads", views.UploadTicketApi.as_view()),
    path("claims/<uuid:claim_id>/warm-start", views.WarmStartApi.as_view()),
    path("claims/<uuid:claim_id>/failure", views.ClaimFailureApi.as_view()),
    path("claims/<uuid:claim_id>/release", views.ClaimReleaseApi.as_view()),
    path("claims/<uuid:claim_id>/delivery", views.DeliveryApi.as_view()),
    path("transfers/<uuid:ticket_id>", views.TransferApi.as_view()),
    path(
        "schema",
        SpectacularAPIView.as_view(custom_settings=SCHEMA_SETTINGS, authentication_classes=[], permission_classes=[]),
        name="worker-schema",
    ),
]
