"""The project page's build panel: the author's latest build beside Build PDF, and its log panel.

The status polls fast while the build runs and slowly otherwise (a build started in another tab shows up);
the PDF pane watches it for a newer PDF. The log panel groups the build's diagnostics (errors, warnings,
bad boxes), each with its file and line, and keeps the raw log, opened at the first error.
"""

import uuid
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from config.http.ui import not_found_is_404
from processing.ui import build_status, task_center
from processing.ui.diagnostic_groups import DiagnosticGroups, diagnostic_groups

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
    diagnostics = task_center.diagnostics_for(user_id=request.user.pk, job_id=job_id)
    before, first, after = _split_at_first_error(diagnostics.log, diagnostics.entries)
    log = BuildLog(job_id, diagnostic_groups(list(diagnostics.entries)), before, first, after)
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
