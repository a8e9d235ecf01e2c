"""The author's latest build of a project, as the project page shows it beside the editor.

Builds are the author's own, like every job: the status names the caller's latest build of the project,
and the PDF pane shows the caller's latest *succeeded* one (it may be older than the latest build, which
may be running or have failed). Both go through ``processing.selectors``, so a member who lost access
sees nothing.
"""

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from processing.blobs import blob_read
from processing.models import JobState, ProcessingArtifact, ProcessingJob
from processing.models.jobs import ACTIVE_STATES
from processing.operations.builds import BUILDS
from processing.selectors import jobs_visible_to
from processing.ui.diagnostic_groups import DiagnosticCounts, diagnostic_counts
from processing.ui.task_center import PHASE_WORDS, failure_sentence, is_content_failure

MAX_REPORT_BYTES = 64 * 1024


@dataclass(frozen=True)
class BuiltPdf:
    job_id: uuid.UUID
    url: str
    synctex: bool
    words: int | None
    completed_at: datetime


@dataclass(frozen=True)
class BuildStatus:
    project_id: uuid.UUID
    job_id: uuid.UUID | None
    state: str  # "none" before the first build
    active: bool
    phase_text: str
    elapsed_seconds: float | None
    failure_sentence: str
    failure_class: str
    failure_code: str
    content_failure: bool  # the sources' fault: Rebuild after a fix, not Retry
    counts: DiagnosticCounts
    pdf: BuiltPdf | None
    now: datetime


def build_status_for(*, user_id: int, project_id: uuid.UUID) -> BuildStatus:
    """The caller's latest build of the project and latest PDF; raises nothing for a project they cannot see
    (there is simply no build of theirs to show)."""
    latest = _latest_builds(user_id, project_id, limit=1)
    job = latest[0] if latest else None
    succeeded = job if job is not None and job.state == JobState.SUCCEEDED else _latest_succeeded(user_id, project_id)
    now = timezone.now()
    return BuildStatus(
        project_id=project_id,
        job_id=job.pk if job else None,
        state=job.state if job else "none",
        active=bool(job and job.state in ACTIVE_STATES),
        phase_text=PHASE_WORDS.get(job.phase, job.phase) if job else "",
        elapsed_seconds=(now - (job.created_at)).total_seconds() if job and job.state in ACTIVE_STATES else None,
        failure_sentence=failure_sentence(job) if job and job.failure_class else "",
        failure_class=job.failure_class if job else "",
        failure_code=job.failure_code if job else "",
        content_failure=bool(job and is_content_failure(job)),
        counts=diagnostic_counts(job.diagnostics if job else []),
        pdf=_built_pdf(succeeded) if succeeded is not None else None,
        now=now,
    )


def _latest_builds(user_id: int, project_id: uuid.UUID, *, limit: int) -> list[ProcessingJob]:
    jobs, _ = jobs_visible_to(user_id=user_id, project_id=project_id, limit=limit * 4)
    return [job for job in jobs if job.operation in BUILDS.values()][:limit]


def _latest_succeeded(user_id: int, project_id: uuid.UUID) -> ProcessingJob | None:
    jobs, _ = jobs_visible_to(user_id=user_id, project_id=project_id, state="terminal", limit=50)
    return next((job for job in jobs if job.operation in BUILDS.values() and job.state == JobState.SUCCEEDED), None)


def _built_pdf(job: ProcessingJob) -> BuiltPdf | None:
    artifacts = {artifact.role: artifact for artifact in job.artifacts.all()}
    pdf = artifacts.get("pdf")
    if pdf is None:
        return None
    return BuiltPdf(
        job_id=job.pk,
        url=f"/v1/processing/jobs/{job.pk}/artifacts/{pdf.pk}",
        synctex="synctex" in artifacts,
        words=_words(artifacts.get("report")),
        completed_at=job.completed_at,
    )


def _words(report: ProcessingArtifact | None) -> int | None:
    """The word count a build reported (``{"words": n, …}``), if it did."""
    if report is None or report.size_bytes > MAX_REPORT_BYTES:
        return None
    try:
        words = json.loads(blob_read(report.blob_id)).get("words")
    except (ValueError, AttributeError):
        return None
    return words if isinstance(words, int) and words >= 0 else None
