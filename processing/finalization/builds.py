"""The builds' finalizer: their success is their project's output too (``processing/kernel/project_outputs.py``)."""

from processing.finalization.checks import requester_permission_condition, staged_bytes_verified
from processing.finalization.publication import Publication
from processing.kernel.project_outputs import build_output_publish, report_start, report_words
from processing.models import INTERNAL_ARTIFACT_ROLES, ProcessingJob, StagedOutput
from workspace import facade as workspace


def publish_build(job: ProcessingJob, staged: list[StagedOutput]) -> Publication:
    """The builds' finalizer: every staged output becomes an artifact of the job and, but for the machinery's own
    (the warm start), a file of the project's output, while the requester may still build the project."""
    contents = {
        output.role: staged_bytes_verified(job, output)
        for output in staged
        if output.role not in INTERNAL_ARTIFACT_ROLES
    }
    files = tuple(
        workspace.OutputFile(
            output.role,
            output.media_type,
            output.filename,
            output.size_bytes,
            workspace.output_content_store(data=contents[output.role]),
        )
        for output in staged
        if output.role in contents
    )
    words = report_words(contents.get("report"))
    start = report_start(contents.get("report"))

    def output_published(locked: ProcessingJob) -> dict:
        log = locked.diagnostic_log
        build_output_publish(locked, files=files, words=words, diagnostics=locked.diagnostics, log=log)
        return {"build_start": start}

    return Publication(publish=staged, condition=requester_permission_condition(job), before_publish=output_published)
