"""Processing's surface for other apps: what the Library (and any context above Processing) may use.

Processing never imports those apps. They submit jobs, register the finalizers
of their operations and hook into upkeep (blobs they keep, promises the
invariant checker verifies) when their app is ready. Everything here is a
re-export or a one-line function over a room of Processing.
"""

import uuid

from processing.api.serializers import JobSerializer
from processing.api.views import IDEMPOTENCY_KEY
from processing.exceptions import InvalidOptions
from processing.finalization.checks import staged_bytes_verified
from processing.finalization.publication import FinalizationRejected, Publication, PublicationCondition
from processing.finalization.registry import Finalizer, finalizer_register
from processing.kernel.blobs import BlobWindow, blob_keeper_register, blob_put, blob_read
from processing.kernel.capabilities import operation_enabled
from processing.kernel.clock import db_now
from processing.kernel.outbox import outbox_emit
from processing.models import FailureClass, OutboxEvent, ProcessingBlob, ProcessingJob, StagedOutput
from processing.models.jobs import ACTIVE_STATES
from processing.queue.wakeups import wakeups
from processing.selectors import job_visible
from processing.submission.idempotency import Scope as SubmissionScope
from processing.submission.idempotency import command_digest
from processing.submission.idempotency import key_validate as idempotency_key_validate
from processing.submission.stored_input import (
    StoredInput,
    stored_input_job_queue,
    stored_input_reserve,
    stored_input_resolve,
)
from processing.upkeep.alerts import Alert, alert_source_register
from processing.upkeep.invariants import Violation, invariant_register
from processing.upkeep.metrics import collector_register

__all__ = [
    "ACTIVE_STATES",
    "IDEMPOTENCY_KEY",
    "Alert",
    "BlobWindow",
    "FailureClass",
    "FinalizationRejected",
    "Finalizer",
    "InvalidOptions",
    "JobSerializer",
    "Publication",
    "PublicationCondition",
    "StagedOutput",
    "StoredInput",
    "SubmissionScope",
    "Violation",
    "alert_source_register",
    "blob_keeper_register",
    "blob_put",
    "blob_read",
    "blobs_present",
    "collector_register",
    "command_digest",
    "db_now",
    "finalizer_register",
    "idempotency_key_validate",
    "invariant_register",
    "job_retried",
    "job_states",
    "job_visible",
    "operation_enabled",
    "outbox_emit",
    "outbox_payload_values",
    "staged_bytes_verified",
    "stored_input_job_queue",
    "stored_input_reserve",
    "stored_input_resolve",
]


def job_states(*, job_ids) -> dict[uuid.UUID, str]:
    """The state of each of these jobs that still exists (retired jobs are absent), in one query."""
    return dict(ProcessingJob.objects.filter(pk__in=list(job_ids)).values_list("pk", "state"))


def job_retried(*, job_id: uuid.UUID) -> uuid.UUID | None:
    """The job this one is a manual retry of, if it is one."""
    return ProcessingJob.objects.filter(pk=job_id).values_list("retry_of_id", flat=True).first()


def blobs_present(*, blob_ids) -> set[int]:
    """Which of these blobs still exist."""
    return set(ProcessingBlob.objects.filter(pk__in=list(blob_ids)).values_list("pk", flat=True))


def outbox_payload_values(*, kind: str, field: str) -> set:
    """The values of ``payload[field]`` among the outbox events of ``kind`` (dispatched or not)."""
    return set(OutboxEvent.objects.filter(kind=kind).values_list(f"payload__{field}", flat=True))


def wakeup_listener_ready(*, timeout: float) -> bool:
    """Whether this process hears the queue's and jobs' NOTIFY wake-ups (a replica's health check)."""
    return wakeups.listening(timeout=timeout)
