"""The HTTP response that hands out a project file's bytes.

Assets are whatever an editor uploaded, HTML and SVG included, served from
Quire's own origin: they go out as attachments under a sandboxing CSP so that
opening one never runs its script with the viewer's session.
"""

import mimetypes

from django.http import HttpResponse
from django.utils.http import content_disposition_header

from workspace import selectors
from workspace.models import FileKind, ProjectFile


def file_response(file: ProjectFile, *, attachment: bool) -> HttpResponse:
    if file.kind == FileKind.TEXT:
        content_type = "text/plain; charset=utf-8"
    else:
        content_type = mimetypes.guess_type(file.path)[0] or "application/octet-stream"
        attachment = True
    response = HttpResponse(selectors.file_bytes(file), content_type=content_type)
    response["ETag"] = f'"{file.version}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["Content-Disposition"] = content_disposition_header(attachment, file.path.rsplit("/", 1)[-1])
    return response
