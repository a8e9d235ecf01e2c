from django.urls import path

from processing import views

app_name = "processing"

urlpatterns = [
    path("projects/<uuid:project_id>/library/upload", views.library_upload, name="library-upload"),
    path(
        "projects/<uuid:project_id>/library/<uuid:document_id>/replace",
        views.library_replace,
        name="library-replace",
    ),
]
