from foundation.errors import NotFound, PayloadTooLarge, QuireError


class ProcessingError(QuireError):
    """Document processing refused the request."""


class IdempotencyKeyRequired(ProcessingError):
    """Send an Idempotency-Key header with every creation command."""

    code = "idempotency_key_required"
    status_code = 428


class IdempotencyKeyInvalid(ProcessingError):
    """An Idempotency-Key is 1–128 printable ASCII characters."""

    code = "idempotency_key_invalid"


class IdempotencyKeyReused(ProcessingError):
    """That Idempotency-Key was already used for a different command."""

    code = "idempotency_key_reused"
    status_code = 409


class OutcomeUnresolved(ProcessingError):
    """The outcome of the earlier request with this idempotency key cannot be found; retry shortly."""

    code = "outcome_unresolved"
    status_code = 503


class QueueFull(ProcessingError):
    """The processing queue is full; retry later."""

    code = "queue_full"
    status_code = 503


class TooManyActiveJobs(ProcessingError):
    """Too many jobs are already active; retry when some finish."""

    code = "too_many_active_jobs"
    status_code = 429


class OperationNotEnabled(NotFound):
    """This operation is not enabled on this deployment."""

    code = "operation_not_enabled"


class ProjectTypeUnsupported(ProcessingError):
    """This operation does not apply to this kind of project."""

    code = "project_type_unsupported"


class InvalidOptions(ProcessingError):
    """The options are not valid for this operation."""

    code = "invalid_options"


class InputTooLarge(PayloadTooLarge):
    """The input is larger than this deployment processes."""

    code = "input_too_large"


class InvalidInput(ProcessingError):
    """The input cannot be processed."""

    code = "invalid_input"


class JobNotFound(NotFound):
    """Job not found."""

    code = "job_not_found"


class ArtifactNotFound(NotFound):
    """Artifact not found."""

    code = "artifact_not_found"


class WarmStartNotFound(NotFound):
    """This claim has no warm start."""

    code = "warm_start_not_found"


class InvalidCursor(ProcessingError):
    """The cursor is not one this server issued."""

    code = "invalid_cursor"


class ClaimLost(ProcessingError):
    """This claim is no longer current: its lease expired or the job moved on."""

    code = "claim_lost"
    status_code = 409


class OutputRejected(ProcessingError):
    """The staged output does not match what the operation declares."""

    code = "output_rejected"
    status_code = 422


class JobCancelled(ProcessingError):
    """The job was cancelled; its output will not be published."""

    code = "job_cancelled"
    status_code = 409


class WorkerUnauthorized(ProcessingError):
    """The worker token is missing or not one this deployment knows."""

    code = "worker_unauthorized"
    status_code = 401


class ProcessorOutOfScope(ProcessingError):
    """This worker identity may not register a processor for that operation."""

    code = "processor_out_of_scope"
    status_code = 422


class ProtocolInvalid(ProcessingError):
    """The worker request does not follow the protocol."""

    code = "protocol_invalid"
    status_code = 422


class OffersInvalid(ProtocolInvalid):
    """Offers must name this session's processors, within their slots."""


class SessionGone(ProcessingError):
    """The session expired or was closed; register again."""

    code = "session_gone"
    status_code = 409


class SessionNotFound(NotFound):
    """No such session for this worker identity."""

    code = "session_not_found"


class RequestInProgress(ProcessingError):
    """A request with this request_id is still being handled."""

    code = "request_in_progress"
    status_code = 409


class RequestIdReused(ProcessingError):
    """This request_id was already used with a different payload."""

    code = "request_id_reused"
    status_code = 409


class TicketInvalid(ProcessingError):
    """The transfer ticket is unknown, expired, used for another purpose, or its secret is wrong."""

    code = "ticket_invalid"
    status_code = 403


class JobNotRetryable(ProcessingError):
    """Only a failed job whose input was captured, and that its content did not make fail, can be retried."""

    code = "job_not_retryable"
    status_code = 409


class SyncTexNotAvailable(NotFound):
    """This build has no SyncTeX data."""

    code = "synctex_not_available"


class SyncTexUnreadable(SyncTexNotAvailable):
    """This build's SyncTeX data cannot be read."""

    code = "synctex_unreadable"


class SyncTexNoMatch(NotFound):
    """Nothing in this build's SyncTeX data matches that place."""

    code = "synctex_no_match"


class SyncTexQueryInvalid(ProcessingError):
    """The SyncTeX lookup's parameters are not valid."""

    code = "synctex_query_invalid"


class OperationUnknown(NotFound):
    """No operation by that name."""

    code = "operation_unknown"
