from django.urls import path

from processing.ui import build_views
from processing.ui import task_views as views

app_name = "processing"

urlpatterns = [
    path("tasks", views.tasks_page, name="tasks"),
    path("tasks/list", views.task_list, name="task-list"),
    path("tasks/badge", views.task_badge, name="task-badge"),
    path("tasks/<uuid:job_id>", views.task_row, name="task-row"),
    path("tasks/<uuid:job_id>/cancel", views.task_cancel, name="task-cancel"),
    path("tasks/<uuid:job_id>/retry", views.task_retry, name="task-retry"),
    path("tasks/<uuid:job_id>/diagnostics", views.task_diagnostics, name="task-diagnostics"),
    path("tasks/<uuid:job_id>/rebuild", views.task_rebuild, name="task-rebuild"),
    path("tasks/<uuid:job_id>/build-log", build_views.job_build_log, name="build-log"),
    path("projects/<uuid:project_id>/processing/build-status", build_views.project_build_status, name="build-status"),
    path("projects/<uuid:project_id>/processing/output-log", build_views.project_output_log, name="output-log"),
    path("projects/<uuid:project_id>/processing/actions", views.project_actions, name="project-actions"),
    path("projects/<uuid:project_id>/processing/build", views.build_submit, name="build"),
    path("projects/<uuid:project_id>/processing/export/pptx", views.export_pptx_submit, name="export-pptx"),
    path("imports/pptx", views.import_section, name="import-section"),
    path("imports/pptx/submit", views.import_pptx_submit, name="import-pptx"),
]
