from django.urls import path

from library import views

app_name = "library"

urlpatterns = [
    path("projects/<uuid:project_id>/library/upload", views.library_upload, name="upload"),
    path(
        "projects/<uuid:project_id>/library/<uuid:document_id>/panel",
        views.library_document_panel,
        name="document-panel",
    ),
    path("projects/<uuid:project_id>/library/<uuid:document_id>/replace", views.library_replace, name="replace"),
]
