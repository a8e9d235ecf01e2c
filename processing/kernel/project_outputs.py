"""The project's output as Processing publishes it (docs/architecture.md §7): a build's success becomes its
project's output, which every member sees, whether the build ran (its finalizer,
``finalization/builds.py``) or reused an earlier result (``submission/submit.py``).

The output is Workspace's: its files' bytes are copied into Workspace's storage before the publishing
transaction (no file I/O under the job's lock), and Workspace's ``output_publish`` runs inside that
transaction, so an output exists exactly when its build succeeded, and never from a build whose publication
was refused. Workspace keeps the newest capture's output; a late build of an older one changes nothing.
"""

import json

from processing.kernel.blobs import blob_read
from processing.models import INTERNAL_ARTIFACT_ROLES, ProcessingArtifact, ProcessingJob
from workspace import facade as workspace

MAX_REPORT_BYTES = 64 * 1024


def build_output_publish(job: ProcessingJob, *, files, words: int | None, diagnostics: list, log: str) -> bool:
    """Inside the publishing transaction: the succeeding build ``job`` as its project's output. A build of a
    version of the project's history is not: it stays the job's own."""
    if (job.options or {}).get("version") is not None:
        return False
    captured = job.captured or {}
    output = workspace.BuildOutput(
        job_id=job.pk,
        operation=job.operation,
        built_by_id=job.requester_id,
        generation=int(captured.get("generation") or 0),
        documents=list(captured.get("documents") or []),
        words=words,
        diagnostics=list(diagnostics or []),
        log=log or "",
        files=tuple(files),
    )
    return workspace.output_publish(project_id=job.project_id, output=output)


def reused_output_prepared(source: ProcessingJob) -> tuple[tuple, int | None]:
    """Outside any transaction: the files (stored in Workspace, copied from Processing's blobs where they
    are not) and word count of an earlier build whose result a new job reuses."""
    files, words = [], None
    artifacts = ProcessingArtifact.objects.filter(job_id=source.pk).exclude(role__in=INTERNAL_ARTIFACT_ROLES)
    for artifact in artifacts.order_by("role"):
        data = None
        if not workspace.output_content_present(sha256=artifact.sha256):
            data = blob_read(artifact.blob_id)
            workspace.output_content_store(data=data)
        if artifact.role == "report" and artifact.size_bytes <= MAX_REPORT_BYTES:
            words = report_words(data if data is not None else blob_read(artifact.blob_id))
        files.append(
            workspace.OutputFile(
                artifact.role, artifact.media_type, artifact.filename, artifact.size_bytes, artifact.sha256
            )
        )
    return tuple(files), words


BUILD_STARTS = ("warm", "clean", "fallback")


def report_start(data: bytes | None) -> str:
    """How the build started, as its report says (``warm``, ``clean``, ``fallback``); "" when it does not."""
    if not data or len(data) > MAX_REPORT_BYTES:
        return ""
    try:
        start = json.loads(data).get("start")
    except (ValueError, AttributeError):
        return ""
    return start if start in BUILD_STARTS else ""


def report_words(data: bytes | None) -> int | None:
    """The word count a build reported (``{"words": n, …}``), if it did."""
    if not data or len(data) > MAX_REPORT_BYTES:
        return None
    try:
        words = json.loads(data).get("words")
    except (ValueError, AttributeError):
        return None
    return words if isinstance(words, int) and words >= 0 else None
