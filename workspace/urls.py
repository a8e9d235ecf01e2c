from django.urls import path

from workspace import views

app_name = "workspace"

urlpatterns = [
    path("", views.project_list, name="project-list"),
    path("projects/new", views.project_new, name="project-new"),
    path("projects/new/upload", views.project_from_zip, name="project-from-zip"),
    path("projects/<uuid:project_id>/", views.project_detail, name="project-detail"),
    path("projects/<uuid:project_id>/tree", views.project_tree, name="project-tree"),
    path("projects/<uuid:project_id>/upload", views.file_upload, name="file-upload"),
    path("projects/<uuid:project_id>/folders/new", views.folder_new, name="folder-new"),
    path("projects/<uuid:project_id>/files/convert", views.file_convert, name="file-convert"),
    path("projects/<uuid:project_id>/files/new", views.file_new, name="file-new"),
    path("projects/<uuid:project_id>/files/rename", views.file_rename, name="file-rename"),
    path("projects/<uuid:project_id>/files/delete", views.file_delete, name="file-delete"),
    path("projects/<uuid:project_id>/files/raw/<path:path>", views.file_download, name="file-download"),
    path("projects/<uuid:project_id>/settings", views.project_settings, name="project-settings"),
    path("projects/<uuid:project_id>/delete", views.project_delete, name="project-delete"),
]
