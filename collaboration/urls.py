from django.urls import path

from collaboration import views

app_name = "collaboration"

urlpatterns = [
    path("projects/<uuid:project_id>/documents/save", views.document_save, name="document-save"),
]
