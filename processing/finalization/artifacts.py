"""The finalizer of builds and exports: every staged output becomes an artifact of the job."""

from processing.finalization.checks import requester_permission_condition, staged_bytes_verified
from processing.finalization.publication import Publication
from processing.models import StagedOutput


def publish_artifacts(job, staged: list[StagedOutput]) -> Publication:
    """Publish every staged output as an artifact, while the requester may still see it."""
    for output in staged:
        staged_bytes_verified(job, output)
    return Publication(publish=staged, condition=requester_permission_condition(job))
