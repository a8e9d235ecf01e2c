"""What the project page shows beside the editor: the project's output, and the caller's own latest build.

The PDF pane shows the project's output (docs/architecture.md §7): the newest capture's successful build,
whoever asked for it, which every member who may view the project reads, with who built it and when. The
status beside Build PDF is the caller's own latest build, like every job in the task center: running, failed
(with its errors), or done. The log panel shows the caller's latest build when it failed after the output
was built (so an author sees why), the output's diagnostics otherwise.
"""

import dataclasses
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.urls import reverse
from django.utils import timezone

from access import facade as access
from processing.models import JobState, ProcessingJob
from processing.models.jobs import ACTIVE_STATES
from processing.operations.builds import BUILDS
from processing.queue.pauses import paused_operations
from processing.selectors import jobs_visible_to
from processing.ui.diagnostic_groups import DiagnosticCounts, diagnostic_counts
from processing.ui.task_center import failure_sentence, is_content_failure, is_superseded, phase_text
from workspace import facade as workspace


@dataclass(frozen=True)
class ShownOutput:
    """The project's output as the pane shows it."""

    job_id: uuid.UUID
    url: str  # changes with every new output, so the pane knows a newer PDF when it sees one
    download_url: str
    synctex_url: str  # "" when the output has no SyncTeX data
    words: int | None
    built_by: str
    built_at: datetime
    counts: DiagnosticCounts


@dataclass(frozen=True)
class BuildStatus:
    project_id: uuid.UUID
    job_id: uuid.UUID | None  # the caller's latest build
    state: str  # "none" before the caller's first build
    active: bool
    phase_text: str
    elapsed_seconds: float | None
    failure_sentence: str
    failure_class: str
    failure_code: str
    content_failure: bool  # the sources' fault: Rebuild after a fix, not Retry
    counts: DiagnosticCounts
    output: ShownOutput | None
    log_url: str
    may_build: bool
    now: datetime
    took_seconds: float | None = None  # the caller's latest build, submitted → done, when it succeeded
    start: str = ""  # how it started: warm, clean, fallback ("" for a reuse or a Typst build)
    cache_hit: bool = False
    superseded: bool = False  # replaced in the queue by a newer build ("build when I stop typing")


def build_status_for(*, user_id: int, project_id: uuid.UUID) -> BuildStatus:
    """The caller's latest build of the project and the project's output. A project the caller cannot see has
    neither (nothing of it is shown)."""
    latest = _latest_builds(user_id, project_id, limit=1)
    job = latest[0] if latest else None
    output = _shown_output(user_id, project_id)
    if output is not None and _failed_after(job, output):
        # The count describes the older PDF, and beside a failure it reads as the count of the text just built.
        output = dataclasses.replace(output, words=None)
    now = timezone.now()
    return BuildStatus(
        project_id=project_id,
        job_id=job.pk if job else None,
        state=job.state if job else "none",
        active=bool(job and job.state in ACTIVE_STATES),
        phase_text=phase_text(job, _paused_if_queued(job)) if job else "",
        elapsed_seconds=(now - (job.created_at)).total_seconds() if job and job.state in ACTIVE_STATES else None,
        failure_sentence=failure_sentence(job) if job and job.failure_class else "",
        failure_class=job.failure_class if job else "",
        failure_code=job.failure_code if job else "",
        content_failure=bool(job and is_content_failure(job)),
        counts=diagnostic_counts(job.diagnostics if job else []),
        output=output,
        log_url=_log_url(job, output, project_id),
        may_build=access.permission_check(user_id=user_id, project_id=project_id, permission=access.Permission.BUILD),
        now=now,
        took_seconds=_took_seconds(job),
        start=job.build_start if job else "",
        cache_hit=bool(job and job.cache_hit),
        superseded=bool(job and is_superseded(job)),
    )


def _took_seconds(job: ProcessingJob | None) -> float | None:
    """Fast is visible: how long the build took from the click to its PDF."""
    if job is None or job.state != JobState.SUCCEEDED or job.completed_at is None:
        return None
    return max(0.0, (job.completed_at - job.created_at).total_seconds())


def _paused_if_queued(job: ProcessingJob) -> frozenset:
    """The paused operations, asked only when the build waits in the queue (as the task center does)."""
    return frozenset(paused_operations()) if job.state == JobState.QUEUED else frozenset()


def _latest_builds(user_id: int, project_id: uuid.UUID, *, limit: int) -> list[ProcessingJob]:
    jobs, _ = jobs_visible_to(user_id=user_id, project_id=project_id, limit=limit * 4)
    return [job for job in jobs if job.operation in BUILDS.values()][:limit]


def _shown_output(user_id: int, project_id: uuid.UUID) -> ShownOutput | None:
    try:
        output = workspace.output_for(user_id=user_id, project_id=project_id)
    except (access.ProjectNotFound, workspace.NoOutput):
        return None
    base = f"/v1/projects/{project_id}/output"
    return ShownOutput(
        job_id=output.job_id,
        url=f"{base}/pdf?build={output.job_id}",
        download_url=f"{base}/pdf?download",
        synctex_url=f"{base}/synctex" if "synctex" in output.files else "",
        words=output.words,
        built_by=access.usernames_of(user_ids=[output.built_by_id]).get(output.built_by_id, "someone"),
        built_at=output.built_at,
        counts=diagnostic_counts(output.diagnostics),
    )


def _failed_after(job: ProcessingJob | None, output: ShownOutput | None) -> bool:
    """Whether the caller's latest build ended without becoming the output, after the output was built."""
    mine_failed = job is not None and job.state not in ACTIVE_STATES and job.state != JobState.SUCCEEDED
    return mine_failed and (output is None or job.created_at > output.built_at)


def _log_url(job: ProcessingJob | None, output: ShownOutput | None, project_id: uuid.UUID) -> str:
    """The caller's build when it ended without becoming the output (its errors are theirs to see), else the
    output's log."""
    if _failed_after(job, output):
        return reverse("processing:build-log", args=[job.pk])
    return reverse("processing:output-log", args=[project_id]) if output is not None else ""
