"""Core-owned finalization: validate staged outputs, recheck authorization, publish once.

Validation reads blob bytes, so it runs without any row lock; the job is
fenced instead by its random finalization token and lease. Every publication
compares the token where it writes (in the terminal transition's own UPDATE, or
under ``FOR UPDATE`` when the publication has work of its own), and the
terminal transition is unique per job, so a second finalizer (a recovery after
a crash, or a concurrent reaper) publishes nothing twice.
"""

import contextlib
import logging
import uuid
from datetime import timedelta

from django.db import InterfaceError, OperationalError, connection, transaction

from processing.finalization.publication import FinalizationRejected, Publication
from processing.finalization.registry import finalizer_for
from processing.kernel.attempt_log import attempt_log
from processing.kernel.clock import db_now
from processing.kernel.configuration import limits
from processing.kernel.delivered import Delivered, delivered_read
from processing.kernel.transitions import failure_fields, job_transition
from processing.models import (
    FailureClass,
    JobState,
    ProcessingAttempt,
    ProcessingJob,
)

logger = logging.getLogger(__name__)

# A lost database connection is the one failure recovery can finish later; any other exception from a
# finalizer is deterministic for these bytes, and retrying it every sweep would keep the job unfinished forever.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
FINALIZER_CRASHED = (
    FailureClass.INTERNAL_CONTRACT_VIOLATION,
    "finalizer_error",
    "Quire could not check or publish this job's result; the operators have the details.",
)


def _locked_if_owned(job_id: uuid.UUID, token: uuid.UUID) -> ProcessingJob | None:
    job = ProcessingJob.objects.select_for_update().get(pk=job_id)
    if job.state != JobState.FINALIZING or job.finalization_token != token:
        return None
    return job


def job_finalize(*, job_id: uuid.UUID, token: uuid.UUID, delivered: Delivered | None = None) -> str:
    """Finish a delivered job if ``token`` still owns its finalization; returns the job's state. ``delivered`` is
    the job as its delivery read it, if it did (it is read here otherwise)."""
    job, attempt, staged = delivered or delivered_read(job_id)
    if job.state != JobState.FINALIZING or job.finalization_token != token:
        return job.state
    finalizer = finalizer_for(job.operation)
    log = attempt_log(attempt)
    try:
        publication: Publication = finalizer(job, staged)
    except FinalizationRejected as rejection:
        logger.warning("finalization rejected output", extra={**log, "code": rejection.code})
        return _fail(job_id, token, rejection.failure_class, rejection.code, rejection.message)
    except DATABASE_UNAVAILABLE:
        raise
    except Exception:
        logger.exception("finalizer crashed", extra=log)
        return _fail(job_id, token, *FINALIZER_CRASHED)
    try:
        published = _publish(job_id, token, attempt, publication)
    except DATABASE_UNAVAILABLE:
        raise
    except Exception:
        logger.exception("publication crashed", extra=log)
        return _fail(job_id, token, *FINALIZER_CRASHED)
    if not published:
        if publication.condition is not None:
            try:
                publication.condition.explain()
            except FinalizationRejected as rejection:  # _fail changes nothing unless the token still owns the job
                logger.warning("finalization rejected output", extra={**log, "code": rejection.code})
                return _fail(job_id, token, rejection.failure_class, rejection.code, rejection.message)
        return ProcessingJob.objects.values_list("state", flat=True).get(pk=job_id)
    logger.info("job finalized", extra=log)
    return JobState.SUCCEEDED


def _publish(job_id: uuid.UUID, token: uuid.UUID, attempt: ProcessingAttempt, publication: Publication) -> bool:
    """Publish the artifacts and the terminal state once, if ``token`` still owns the finalization.

    The terminal transition is guarded by the token and writes the artifacts along, in one statement; a
    publication with work of its own runs that work first, under the job's lock, in the same transaction.
    """
    along = (publication.artifacts_insert_sql(attempt),) if publication.publish else ()
    condition = publication.condition and (publication.condition.sql, publication.condition.params)
    succeeded = {
        "to": JobState.SUCCEEDED,
        "only_from": {JobState.FINALIZING},
        "guard": {"finalization_token": token},
        "along": along,
        "condition": condition,
        "processor_contract": attempt.processor_contract,
        **publication.extra,
    }
    if publication.before_publish is None:
        # In a caller's transaction a refused statement would abort it; a savepoint keeps ``_fail`` possible.
        with transaction.atomic() if connection.in_atomic_block else contextlib.nullcontext():
            return job_transition(job_id=job_id, **succeeded)
    with transaction.atomic():
        job = _locked_if_owned(job_id, token)
        if job is None:
            return False
        moved = job_transition(job_id=job_id, **{**succeeded, **publication.before_publish(job)})
        if not moved:  # the condition no longer held: the publication's own work is not kept either
            transaction.set_rollback(True)
        return moved


def _fail(job_id: uuid.UUID, token: uuid.UUID, failure_class: str, code: str, message: str) -> str:
    with transaction.atomic():
        if _locked_if_owned(job_id, token) is not None:
            fields = failure_fields(failure_class, code, message)
            job_transition(job_id=job_id, to=JobState.FAILED, only_from={JobState.FINALIZING}, **fields)
    return ProcessingJob.objects.values_list("state", flat=True).get(pk=job_id)


def finalization_take_over(*, job_id: uuid.UUID) -> uuid.UUID | None:
    """For recovery: take a new token for a job whose finalization lease has expired, or None."""
    with transaction.atomic():
        now = db_now()
        token = uuid.uuid4()
        taken = ProcessingJob.objects.filter(
            pk=job_id, state=JobState.FINALIZING, finalization_expires_at__lte=now
        ).update(
            finalization_token=token,
            finalization_expires_at=now + timedelta(seconds=limits().finalization_lease_seconds),
        )
    return token if taken else None
