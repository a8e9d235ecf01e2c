"""Core-owned finalization: validate staged outputs, recheck authorization, publish once.

Validation reads blob bytes, so it runs without any row lock; the job is
fenced instead by its random finalization token and lease. Every publication
compares the token where it writes (in the terminal transition's own UPDATE, or
under ``FOR UPDATE`` when the publication has work of its own), and the
terminal transition is unique per job, so a second finalizer (a recovery after
a crash, or a concurrent reaper) publishes nothing twice.
"""

import contextlib
import functools
import logging
import uuid
from datetime import timedelta
from typing import NamedTuple

from django.db import InterfaceError, OperationalError, connection, transaction
from django.utils.module_loading import import_string

from config.prepared import prepared_cursor
from processing.configuration import limits
from processing.finalization.finalizers import FinalizationRejected, Publication
from processing.models import (
    FailureClass,
    JobState,
    ProcessingAttempt,
    ProcessingBlob,
    ProcessingJob,
    StagedOutput,
)
from processing.operations import operation_get
from processing.queue.claims import db_now
from processing.transitions import failure_fields, job_transition

logger = logging.getLogger(__name__)

# A lost database connection is the one failure recovery can finish later; any other exception from a
# finalizer is deterministic for these bytes, and retrying it every sweep would keep the job unfinished forever.
DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
FINALIZER_CRASHED = (
    FailureClass.INTERNAL_CONTRACT_VIOLATION,
    "finalizer_error",
    "Quire could not check or publish this job's result; the operators have the details.",
)


class Delivered(NamedTuple):
    """A delivered job as finalization reads it: the job, its delivered attempt and the staged outputs."""

    job: ProcessingJob
    attempt: ProcessingAttempt | None
    staged: list[StagedOutput]


def _locked_if_owned(job_id: uuid.UUID, token: uuid.UUID) -> ProcessingJob | None:
    job = ProcessingJob.objects.select_for_update().get(pk=job_id)
    if job.state != JobState.FINALIZING or job.finalization_token != token:
        return None
    return job


def job_finalize(*, job_id: uuid.UUID, token: uuid.UUID, delivered: Delivered | None = None) -> str:
    """Finish a delivered job if ``token`` still owns its finalization; returns the job's state. ``delivered`` is
    the job as its delivery read it, if it did (it is read here otherwise)."""
    job, attempt, staged = delivered or _delivered(job_id)
    if job.state != JobState.FINALIZING or job.finalization_token != token:
        return job.state
    finalizer = import_string(operation_get(job.operation).finalizer)
    log = {
        "job": str(job.pk),
        "attempt": attempt.number,
        "operation": job.operation,
        "claim": str(attempt.claim_id),
    }
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
    logger.info("job finalized", extra={**log, "processor_contract": attempt.processor_contract})
    return JobState.SUCCEEDED


def _columns(alias: str, model) -> str:
    return ", ".join(f'{alias}."{field.column}"' for field in model._meta.concrete_fields)


def delivered_columns(*, job: str, attempt: str, staged: str, data: str) -> str:
    """The select list a delivered job is read from (``delivered_from_rows``): the job's columns, its delivered
    attempt's, one staged output's and that output's bytes, each given as a row expression."""
    return ", ".join(
        [_columns(job, ProcessingJob), _columns(attempt, ProcessingAttempt), _columns(staged, StagedOutput), data]
    )


# The finalizer needs the job, its delivered attempt and that attempt's staged outputs with their bytes:
# one hand-written query, since building it through the ORM cost more than running it. A delivery over HTTP
# gets the same rows from the delivery function itself (migration 0010).
_DELIVERED_SQL = f"""
    SELECT {delivered_columns(job="job", attempt="attempt", staged="staged", data="blob.data")}
    FROM processing_processingjob AS job
    LEFT JOIN LATERAL (
        SELECT * FROM processing_processingattempt AS delivered
        WHERE delivered.job_id = job.id AND delivered.state = 'delivered' ORDER BY delivered.id LIMIT 1
    ) AS attempt ON true
    LEFT JOIN processing_stagedoutput AS staged ON staged.attempt_id = attempt.id
    LEFT JOIN processing_processingblob AS blob ON blob.id = staged.blob_id
    WHERE job.id = %s
    ORDER BY staged.role
"""  # noqa: S608  table and column names are the models' own; the job id is a parameter


@functools.cache
def _loading(model) -> tuple[list[str], list[tuple]]:
    """A model's concrete field names and each field's converters from database values (fixed per model)."""
    fields = model._meta.concrete_fields
    return [field.attname for field in fields], [tuple(field.get_db_converters(connection)) for field in fields]


def _instance(model, values: list):
    """A model instance from its concrete fields' raw column values, converted as the ORM would."""
    names, converters = _loading(model)
    converted = []
    for field_converters, value in zip(converters, values, strict=True):
        for converter in field_converters:
            value = converter(value, None, connection)
        converted.append(value)
    return model.from_db(connection.alias, names, converted)


def delivered_from_rows(rows: list) -> Delivered:
    """The job, its delivered attempt (None if it has none) and the staged outputs, from rows read with
    ``delivered_columns`` (one a staged output, ordered by role; one without an output if there are none)."""
    job_width, attempt_width = len(ProcessingJob._meta.concrete_fields), len(ProcessingAttempt._meta.concrete_fields)
    first = rows[0]
    job = _instance(ProcessingJob, list(first[:job_width]))
    if first[job_width] is None:
        return Delivered(job, None, [])
    attempt = _instance(ProcessingAttempt, list(first[job_width : job_width + attempt_width]))
    attempt.job = job
    staged = []
    for row in rows:
        if row[job_width + attempt_width] is None:  # a delivered attempt without outputs
            break
        output = _instance(StagedOutput, list(row[job_width + attempt_width : -1]))
        output.attempt = attempt
        output.blob = ProcessingBlob.from_db(connection.alias, ["id", "data"], [output.blob_id, row[-1]])
        staged.append(output)
    return Delivered(job, attempt, staged)


def _delivered(job_id: uuid.UUID) -> Delivered:
    with prepared_cursor() as cursor:
        cursor.execute(_DELIVERED_SQL, [job_id])
        rows = cursor.fetchall()
    if not rows:
        raise ProcessingJob.DoesNotExist(job_id)
    return delivered_from_rows(rows)


def _publish(job_id: uuid.UUID, token: uuid.UUID, attempt: ProcessingAttempt, publication: Publication) -> bool:
    """Publish the artifacts and the terminal state once, if ``token`` still owns the finalization.

    The terminal transition is guarded by the token and writes the artifacts along, in one statement; a
    publication with work of its own runs that work first, under the job's lock, in the same transaction.
    """
    along = (publication.artifacts_insert_sql(attempt),) if publication.publish else ()
    condition = publication.condition and (publication.condition.sql, publication.condition.params)
    succeeded = {"to": JobState.SUCCEEDED, "only_from": {JobState.FINALIZING}, "guard": {"finalization_token": token},
                 "along": along, "condition": condition, "processor_contract": attempt.processor_contract,
                 **publication.extra}  # fmt: skip
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
