from processing.models.blobs import ProcessingBlob
from processing.models.checks import InvariantReport
from processing.models.jobs import (
    INTERNAL_ARTIFACT_ROLES,
    AttemptState,
    FailureClass,
    IdempotencyReservation,
    JobState,
    Phase,
    ProcessingArtifact,
    ProcessingAttempt,
    ProcessingJob,
    StagedOutput,
    TerminalCommit,
)
from processing.models.outbox import OutboxEvent
from processing.models.pauses import OperationPause
from processing.models.rollups import OperationRollup, Resolution
from processing.models.workers import (
    SessionState,
    TransferKind,
    TransferTicket,
    WorkerProcessor,
    WorkerRequest,
    WorkerSession,
)

__all__ = [
    "INTERNAL_ARTIFACT_ROLES",
    "AttemptState",
    "FailureClass",
    "IdempotencyReservation",
    "InvariantReport",
    "JobState",
    "OperationPause",
    "OperationRollup",
    "OutboxEvent",
    "Phase",
    "ProcessingArtifact",
    "ProcessingAttempt",
    "ProcessingBlob",
    "ProcessingJob",
    "Resolution",
    "SessionState",
    "StagedOutput",
    "TerminalCommit",
    "TransferKind",
    "TransferTicket",
    "WorkerProcessor",
    "WorkerRequest",
    "WorkerSession",
]
