"""The project page's build panel: the author's latest build beside Build PDF, the project's output, and the
log panel.

The status polls fast while the build runs and slowly otherwise, and is asked again at once when the project's
events socket says the output changed; the PDF pane watches it for a newer PDF. The log panel groups a build's
diagnostics (errors, warnings, bad boxes), each with its file and line, and keeps the raw log, opened at the
first error.
"""

import uuid
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from foundation.http.ui import not_found_is_404
from processing.ui import build_status, task_center
from processing.ui.diagnostic_groups import DiagnosticGroups, diagnostic_groups
from workspace import facade as workspace

ACTIVE_POLL = "1s"
IDLE_POLL = "5s"


@login_required
@require_GET
def project_build_status(request, project_id: uuid.UUID) -> HttpResponse:
    status = build_status.build_status_for(user_id=request.user.pk, project_id=project_id)
    context = {"status": status, "poll": ACTIVE_POLL if status.active else IDLE_POLL}
    return render(request, "processing/build_panel.html#status", context)


@dataclass(frozen=True)
class BuildLog:
    job_id: uuid.UUID
    groups: DiagnosticGroups
    log_before_first_error: str
    first_error_line: str
    log_after_first_error: str


@login_required
@require_GET
@not_found_is_404
def job_build_log(request, job_id: uuid.UUID) -> HttpResponse:
    """The log panel of one of the caller's builds (a failed one, whose errors are theirs to fix)."""
    diagnostics = task_center.diagnostics_for(user_id=request.user.pk, job_id=job_id)
    return _log_panel(request, job_id, diagnostics.log, list(diagnostics.entries))


@login_required
@require_GET
@not_found_is_404
def project_output_log(request, project_id: uuid.UUID) -> HttpResponse:
    """The log panel of the project's output, for every member who may view the project."""
    output = workspace.output_for(user_id=request.user.pk, project_id=project_id)
    entries = [entry for entry in output.diagnostics if isinstance(entry, dict)]
    return _log_panel(request, output.job_id, output.log, entries)


def _log_panel(request, job_id: uuid.UUID, text: str, entries: list[dict]) -> HttpResponse:
    before, first, after = _split_at_first_error(text, entries)
    log = BuildLog(job_id, diagnostic_groups(entries), before, first, after)
    return render(request, "processing/build_panel.html#log", {"log": log})


def _split_at_first_error(log: str, entries) -> tuple[str, str, str]:
    """The raw log around its first error line, so the page can open it there."""
    lines = log.splitlines(keepends=True)
    errors = [entry for entry in entries if entry.get("severity") == "error"]
    for index, line in enumerate(lines):
        if line.startswith("!") or any(_names(entry, line) for entry in errors):
            return "".join(lines[:index]), line, "".join(lines[index + 1 :])
    return log, "", ""


def _names(entry: dict, line: str) -> bool:
    file, number = entry.get("file"), entry.get("line")
    return bool(file and number and f"{file}:{number}:" in line)
