from django.conf import settings
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include, path, register_converter
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from access.api.views import MemberDeleteApi, MemberListApi
from collaboration.api.comments import CommentListApi, CommentReplyApi, CommentReplyListApi, CommentThreadApi
from collaboration.api.views import DocumentStateApi, DocumentUpdateApi
from config.http import pages
from config.http.health import healthz
from config.metrics import metrics_view
from library.api.views import LibraryDocumentApi, LibraryListCreateApi, LibraryPdfApi, LibrarySearchApi
from office.api.converters import OfficePathConverter
from office.api.views import FileInspectionApi, FilePreviewApi
from processing.api.synctex import (
    OutputSyncTexForwardApi,
    OutputSyncTexInverseApi,
    SyncTexForwardApi,
    SyncTexInverseApi,
)
from processing.api.views import (
    ArtifactDownloadApi,
    BuildCreateApi,
    CapabilitiesApi,
    EchoCreateApi,
    JobCancelApi,
    JobDetailApi,
    JobDiagnosticsApi,
    JobListApi,
    PptxExportCreateApi,
    PptxImportCreateApi,
    ProjectCapabilitiesApi,
)
from quire_wire import PROTOCOL_PREFIX
from workspace.api.archives import ProjectArchiveApi, ProjectFromArchiveApi
from workspace.api.folders import FolderCreateApi, FolderDetailApi
from workspace.api.history import (
    HistoryArchiveApi,
    HistoryDiffApi,
    HistoryFileApi,
    HistoryListApi,
    HistoryRestoreApi,
    LabelListApi,
)
from workspace.api.outputs import ProjectOutputApi, ProjectOutputDiagnosticsApi, ProjectOutputFileApi
from workspace.api.views import FileDetailApi, FileListApi, ProjectDetailApi, ProjectListCreateApi

PROJECT = "v1/projects/<uuid:project_id>"
register_converter(OfficePathConverter, "office_path")
OFFICE_FILE = f"{PROJECT}/files/<office_path:path>"

api_v1 = [
    path("v1/projects", ProjectListCreateApi.as_view(), name="projects"),
    path("v1/projects/archive", ProjectFromArchiveApi.as_view(), name="projects-from-archive"),
    path(PROJECT, ProjectDetailApi.as_view(), name="project"),
    path(f"{PROJECT}/files", FileListApi.as_view(), name="project-files"),
    # Before the generic file route; they claim only `<an Office file>/preview.pdf|inspection`.
    path(f"{OFFICE_FILE}/preview.pdf", FilePreviewApi.as_view(), name="project-file-preview"),
    path(f"{OFFICE_FILE}/inspection", FileInspectionApi.as_view(), name="project-file-inspection"),
    path(f"{PROJECT}/files/<path:path>", FileDetailApi.as_view(), name="project-file"),
    path(f"{PROJECT}/archive", ProjectArchiveApi.as_view(), name="project-archive"),
    path(f"{PROJECT}/folders", FolderCreateApi.as_view(), name="project-folders"),
    path(f"{PROJECT}/folders/<path:path>", FolderDetailApi.as_view(), name="project-folder"),
    path(f"{PROJECT}/history", HistoryListApi.as_view(), name="project-history"),
    path(f"{PROJECT}/history/<int:version>/files/<path:path>", HistoryFileApi.as_view(), name="project-history-file"),
    path(f"{PROJECT}/history/<int:version>/diff", HistoryDiffApi.as_view(), name="project-history-diff"),
    path(f"{PROJECT}/history/<int:version>/archive", HistoryArchiveApi.as_view(), name="project-history-archive"),
    path(f"{PROJECT}/history/<int:version>/restore", HistoryRestoreApi.as_view(), name="project-history-restore"),
    path(f"{PROJECT}/labels", LabelListApi.as_view(), name="project-labels"),
    path(f"{PROJECT}/comments", CommentListApi.as_view(), name="project-comments"),
    path(f"{PROJECT}/comments/<uuid:thread>", CommentThreadApi.as_view(), name="project-comment"),
    path(f"{PROJECT}/comments/<uuid:thread>/replies", CommentReplyListApi.as_view(), name="project-comment-replies"),
    path(
        f"{PROJECT}/comments/<uuid:thread>/replies/<uuid:reply>",
        CommentReplyApi.as_view(),
        name="project-comment-reply",
    ),
    path(f"{PROJECT}/members", MemberListApi.as_view(), name="project-members"),
    path(f"{PROJECT}/members/<str:username>", MemberDeleteApi.as_view(), name="project-member"),
    path(f"{PROJECT}/documents/<path:path>/updates", DocumentUpdateApi.as_view(), name="document-updates"),
    path(f"{PROJECT}/documents/<path:path>/state", DocumentStateApi.as_view(), name="document-state"),
    path(f"{PROJECT}/output", ProjectOutputApi.as_view(), name="project-output"),
    path(f"{PROJECT}/output/diagnostics", ProjectOutputDiagnosticsApi.as_view(), name="project-output-diagnostics"),
    path(f"{PROJECT}/output/synctex/forward", OutputSyncTexForwardApi.as_view(), name="project-output-forward"),
    path(f"{PROJECT}/output/synctex/inverse", OutputSyncTexInverseApi.as_view(), name="project-output-inverse"),
    path(f"{PROJECT}/output/<slug:role>", ProjectOutputFileApi.as_view(), name="project-output-file"),
    path(f"{PROJECT}/builds", BuildCreateApi.as_view(), name="project-builds"),
    path(f"{PROJECT}/exports/pptx", PptxExportCreateApi.as_view(), name="project-exports-pptx"),
    path(f"{PROJECT}/processing/capabilities", ProjectCapabilitiesApi.as_view(), name="project-capabilities"),
    path(f"{PROJECT}/library", LibraryListCreateApi.as_view(), name="library"),
    path(f"{PROJECT}/library/search", LibrarySearchApi.as_view(), name="library-search"),
    path(f"{PROJECT}/library/<uuid:document_id>", LibraryDocumentApi.as_view(), name="library-document"),
    path(f"{PROJECT}/library/<uuid:document_id>/pdf", LibraryPdfApi.as_view(), name="library-document-pdf"),
    path("v1/imports/pptx", PptxImportCreateApi.as_view(), name="imports-pptx"),
    path("v1/processing/capabilities", CapabilitiesApi.as_view(), name="capabilities"),
    path("v1/processing/jobs", JobListApi.as_view(), name="jobs"),
    path("v1/processing/jobs/<uuid:job_id>", JobDetailApi.as_view(), name="job"),
    path("v1/processing/jobs/<uuid:job_id>/cancel", JobCancelApi.as_view(), name="job-cancel"),
    path("v1/processing/jobs/<uuid:job_id>/diagnostics", JobDiagnosticsApi.as_view(), name="job-diagnostics"),
    path("v1/processing/jobs/<uuid:job_id>/synctex/forward", SyncTexForwardApi.as_view(), name="job-synctex-forward"),
    path("v1/processing/jobs/<uuid:job_id>/synctex/inverse", SyncTexInverseApi.as_view(), name="job-synctex-inverse"),
    path(
        "v1/processing/jobs/<uuid:job_id>/artifacts/<uuid:artifact_id>",
        ArtifactDownloadApi.as_view(),
        name="job-artifact",
    ),
    path("v1/schema", SpectacularAPIView.as_view(), name="schema"),
    path("v1/docs", SpectacularSwaggerView.as_view(url_name="schema"), name="swagger-ui"),
]

if settings.QUIRE_TEST_OPERATIONS:
    api_v1.append(path(f"{PROJECT}/test-echo", EchoCreateApi.as_view(), name="project-test-echo"))

urlpatterns = [
    *api_v1,
    path(f"{PROTOCOL_PREFIX.removeprefix('/')}/", include("processing.protocol.urls")),
    path("metrics", metrics_view, name="metrics"),
    path("healthz", healthz, name="healthz"),
    # Pages without a <link rel="icon"> (the admin's) make browsers ask here.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True), name="favicon"),
    path("admin/", admin.site.urls),
    path("", include("access.urls")),
    path("", include("workspace.urls")),
    path("", include("processing.urls")),
    path("", include("library.urls")),
]

handler404 = pages.not_found
handler500 = pages.server_error
