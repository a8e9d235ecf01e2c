"""The task center's read model: the caller's jobs in words, for the header badge, the drawer and ``/tasks``.

Everything here reads through ``processing.selectors``, so a row is shown only
to its requester while they may still see its project.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from processing.models import FailureClass, JobState, Phase, ProcessingJob
from processing.models.jobs import ACTIVE_STATES, CONTENT_FAILURES
from processing.operations.builds import BUILDS
from processing.queue.cancellation import job_is_cancellable
from processing.queue.pauses import paused_operations
from processing.selectors import job_counts_visible_to, job_visible, jobs_visible_to
from processing.submission.manual_retry import job_is_retryable
from workspace import facade as workspace

RECENT_TERMINAL_ROWS = 15
BUILD_OPERATIONS = frozenset(BUILDS.values())
UNSEEN_FAILURES_WINDOW = timedelta(hours=24)  # a browser that never opened the center sees the last day's

OPERATION_LABELS = {
    "latex.compile.pdf/v1": "LaTeX build (PDF)",
    "typst.compile.pdf/v1": "Typst build (PDF)",
    "typst.export.pptx/v1": "Export as PPTX",
    "pptx.import.typst/v1": "PPTX import",
    "pdf.index.text/v1": "PDF library indexing",
    "test.echo/v1": "Echo (test operation)",
}
STATE_WORDS = {
    JobState.PREPARING: "Preparing",
    JobState.QUEUED: "Queued",
    JobState.RUNNING: "Running",
    JobState.FINALIZING: "Finalizing",
    JobState.SUCCEEDED: "Succeeded",
    JobState.FAILED: "Failed",
    JobState.CANCELLED: "Cancelled",
    JobState.EXPIRED: "Expired",
}
PHASE_WORDS = {
    Phase.CAPTURING_INPUT: "Capturing the input",
    Phase.WAITING_FOR_WORKER: "Waiting for a worker",
    Phase.PROCESSING: "Processing",
    Phase.UPLOADING_RESULT: "Uploading the result",
    Phase.VALIDATING_RESULT: "Checking the result",
    Phase.PUBLISHING_RESULT: "Publishing the result",
    Phase.COMPLETE: "Done",
}
TERMINAL_WORDS = {
    JobState.SUCCEEDED: "Done",
    JobState.FAILED: "Stopped with an error",
    JobState.CANCELLED: "Cancelled before it finished",
    JobState.EXPIRED: "Waited too long and was dropped",
}
FAILURE_WORDS = {
    FailureClass.INVALID_INPUT: "The input could not be used",
    FailureClass.PROCESSOR_REJECTED: "The document has an error",
    FailureClass.UNSUPPORTED_DEPENDENCY: "The document needs something this server does not have",
    FailureClass.RESOURCE_LIMIT: "The job ran past a limit",
    FailureClass.TRANSIENT_INFRASTRUCTURE: "A temporary problem on the server",
    FailureClass.WORKER_INTERRUPTED: "The worker stopped before it finished",
    FailureClass.INTERNAL_CONTRACT_VIOLATION: "An internal error",
}
# What went wrong, in a sentence an author understands; the failure class stays beside it for those who ask.
FAILURE_SENTENCES = {
    ("latex.compile.pdf/v1", FailureClass.PROCESSOR_REJECTED): "LaTeX stopped with an error.",
    ("typst.compile.pdf/v1", FailureClass.PROCESSOR_REJECTED): "Typst stopped with an error.",
    ("latex.compile.pdf/v1", FailureClass.UNSUPPORTED_DEPENDENCY): (
        "The document needs a LaTeX package or engine this server does not have."
    ),
    ("typst.compile.pdf/v1", FailureClass.UNSUPPORTED_DEPENDENCY): (
        "The document imports a Typst package, which cannot be downloaded here."
    ),
    (None, FailureClass.INVALID_INPUT): "The input could not be used as it is.",
    (None, FailureClass.RESOURCE_LIMIT): "The job took too long or produced too much, and was stopped.",
    (None, FailureClass.TRANSIENT_INFRASTRUCTURE): "A temporary problem on the server stopped it; retrying may help.",
    (None, FailureClass.WORKER_INTERRUPTED): "The worker stopped before it finished; retrying may help.",
    (None, FailureClass.INTERNAL_CONTRACT_VIOLATION): "Something went wrong inside Quire; retrying may help.",
    (None, FailureClass.PROCESSOR_REJECTED): "The document has an error the processor could not get past.",
    (None, FailureClass.UNSUPPORTED_DEPENDENCY): "The document needs something this server does not have.",
}
# Artifacts an author opens are listed first; the rest are described, as they are files of the machinery.
ARTIFACT_DESCRIPTIONS = {
    "log": "the compiler's full log",
    "synctex": "positions linking the PDF to the source (SyncTeX)",
    "report": "figures about the result (word count, conversion notes)",
    "workspace-bundle": "the new project's files, as imported",
    "pages": "the pages as pictures",
}
PRIMARY_ROLES = ("pdf", "pptx")


def failure_sentence(job: ProcessingJob) -> str:
    """What went wrong, in words an author understands (``""`` when nothing did)."""
    if not job.failure_class:
        return ""
    for key in ((job.operation, job.failure_class), (None, job.failure_class)):
        if key in FAILURE_SENTENCES:
            return FAILURE_SENTENCES[key]
    return FAILURE_WORDS.get(job.failure_class, job.failure_class) + "."


def is_superseded(job: ProcessingJob) -> bool:
    """Replaced in the queue by a newer build of the same requester ("build when I stop typing"): not a failure."""
    return job.state == JobState.CANCELLED and job.failure_code == "superseded"


def is_content_failure(job: ProcessingJob) -> bool:
    return job.state == JobState.FAILED and job.failure_class in CONTENT_FAILURES


def operation_label(operation: str) -> str:
    return OPERATION_LABELS.get(operation, operation)


@dataclass(frozen=True)
class ArtifactLink:
    id: uuid.UUID
    role: str
    filename: str
    media_type: str
    size_bytes: int
    job_id: uuid.UUID

    @property
    def description(self) -> str:
        return ARTIFACT_DESCRIPTIONS.get(self.role, "")


@dataclass(frozen=True)
class TaskRow:
    id: uuid.UUID
    operation: str
    label: str
    project_id: uuid.UUID | None
    project_name: str
    state: str
    state_label: str
    phase_text: str
    active: bool
    created_at: datetime
    started_at: datetime | None
    completed_at: datetime | None
    duration: timedelta | None
    failure_class: str
    failure_label: str
    failure_message: str
    failure_sentence: str
    artifacts: tuple[ArtifactLink, ...]  # what the author opens (the PDF, the PPTX), first
    other_artifacts: tuple[ArtifactLink, ...]  # the machinery's files, described
    has_diagnostics: bool
    cancellable: bool
    retryable: bool
    rebuildable: bool  # a project build that failed because of its content: build again after a fix
    cache_hit: bool
    input_filename: str
    result_project_id: uuid.UUID | None
    retry_of_id: uuid.UUID | None
    captured_text: str = ""


@dataclass(frozen=True)
class TaskList:
    rows: tuple[TaskRow, ...]
    now: datetime

    @property
    def any_active(self) -> bool:
        return any(row.active for row in self.rows)


@dataclass(frozen=True)
class TaskCounts:
    active: int
    failed_unseen: int


def phase_text(job: ProcessingJob, paused: frozenset) -> str:
    """What an active job is doing (or how an ended one ended), in words; ``paused``: the paused operations."""
    if job.state == JobState.QUEUED and job.operation in paused:
        return "Waiting — an operator has paused these jobs for now; it will start when they resume them"
    if job.state == JobState.RUNNING and job.cancellation_requested:
        return "Cancelling — the worker has been asked to stop"
    if job.state in ACTIVE_STATES:
        return PHASE_WORDS.get(job.phase, job.phase)
    return TERMINAL_WORDS.get(job.state, job.state)


CAPTURED_DOCUMENTS_SHOWN = 4


def captured_words(captured: dict) -> str:
    """Which versions of the text the job built from, as in "Captured main.tex v14, intro.tex v3 and 2 more"."""
    documents = captured.get("documents") if captured else None
    if not documents:
        return ""
    named = ", ".join(f"{path} v{version}" for path, version in documents[:CAPTURED_DOCUMENTS_SHOWN])
    more = len(documents) - CAPTURED_DOCUMENTS_SHOWN
    return f"Captured {named}" + (f" and {more} more" if more > 0 else "")


def _row(job: ProcessingJob, project_names: dict, paused: frozenset) -> TaskRow:
    links = [ArtifactLink(a.pk, a.role, a.filename, a.media_type, a.size_bytes, job.pk) for a in job.shown_artifacts]
    artifacts = tuple(link for link in links if link.role in PRIMARY_ROLES)
    other_artifacts = tuple(sorted((link for link in links if link.role not in PRIMARY_ROLES), key=_by_role))
    return TaskRow(
        id=job.pk,
        operation=job.operation,
        label=operation_label(job.operation),
        project_id=job.project_id,
        project_name=project_names.get(job.project_id, ""),
        state=job.state,
        state_label="Superseded" if is_superseded(job) else STATE_WORDS.get(job.state, job.state),
        phase_text=phase_text(job, paused),
        active=job.state in ACTIVE_STATES,
        created_at=job.created_at,
        started_at=job.started_at,
        completed_at=job.completed_at,
        duration=(job.completed_at - job.created_at) if job.completed_at else None,
        failure_class=job.failure_class,
        failure_label=FAILURE_WORDS.get(job.failure_class, job.failure_class),
        failure_message=job.failure_message,
        failure_sentence=failure_sentence(job),
        artifacts=artifacts,
        other_artifacts=other_artifacts,
        has_diagnostics=bool(job.diagnostic_log or job.diagnostics),
        cancellable=job_is_cancellable(job),
        retryable=job_is_retryable(job),
        rebuildable=is_content_failure(job) and job.operation in BUILD_OPERATIONS,
        cache_hit=job.cache_hit,
        input_filename=job.input_filename,
        result_project_id=job.result_project_id,
        retry_of_id=job.retry_of_id,
        captured_text=captured_words(job.captured),
    )


def _by_role(link: ArtifactLink) -> str:
    return link.role


def _rows(jobs: list[ProcessingJob]) -> tuple[TaskRow, ...]:
    names = workspace.project_names_of(project_ids=[job.project_id for job in jobs])
    paused = frozenset(paused_operations()) if any(job.state == JobState.QUEUED for job in jobs) else frozenset()
    return tuple(_row(job, names, paused) for job in jobs)


def task_list_for(*, user_id: int) -> TaskList:
    """Every active job of the caller and the latest finished ones, newest first."""
    active, _ = jobs_visible_to(user_id=user_id, state="active", limit=100)
    recent, _ = jobs_visible_to(user_id=user_id, state="terminal", limit=RECENT_TERMINAL_ROWS)
    jobs = sorted([*active, *recent], key=lambda job: (job.created_at, job.pk), reverse=True)
    return TaskList(rows=_rows(jobs), now=timezone.now())


def task_row_for(*, user_id: int, job_id) -> TaskRow:
    """One of the caller's jobs as a row; raises JobNotFound when they may not see it."""
    return _rows([job_visible(user_id=user_id, job_id=job_id)])[0]


def task_counts_for(*, user_id: int, seen_at: datetime | None) -> TaskCounts:
    """Active jobs, and failures completed after ``seen_at`` (the browser's last look at the center)."""
    since = seen_at or timezone.now() - UNSEEN_FAILURES_WINDOW
    active, failed = job_counts_visible_to(user_id=user_id, failed_after=since)
    return TaskCounts(active=active, failed_unseen=failed)


@dataclass(frozen=True)
class Diagnostics:
    job_id: uuid.UUID
    log: str
    entries: tuple[dict, ...]


def diagnostics_for(*, user_id: int, job_id) -> Diagnostics:
    """The job's bounded log and its parsed entries (file, line, severity, message)."""
    job = job_visible(user_id=user_id, job_id=job_id)
    return Diagnostics(job.pk, job.diagnostic_log, tuple(entry for entry in job.diagnostics if isinstance(entry, dict)))
