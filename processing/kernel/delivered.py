"""A delivered job as finalization reads it: the job, its delivered attempt and the staged outputs with their bytes.

Delivery reads these rows in its own statement (``queue.delivery``, the delivery function) and hands them to
finalization; a finalization that resumes after a crash reads them here. Both use the same select list.
"""

import functools
import uuid
from typing import NamedTuple

from django.db import connection

from foundation.database.prepared import prepared_cursor
from processing.models import ProcessingAttempt, ProcessingBlob, ProcessingJob, StagedOutput


class Delivered(NamedTuple):
    """A delivered job as finalization reads it: the job, its delivered attempt and the staged outputs."""

    job: ProcessingJob
    attempt: ProcessingAttempt | None
    staged: list[StagedOutput]


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


def delivered_read(job_id: uuid.UUID) -> Delivered:
    with prepared_cursor() as cursor:
        cursor.execute(_DELIVERED_SQL, [job_id])
        rows = cursor.fetchall()
    if not rows:
        raise ProcessingJob.DoesNotExist(job_id)
    return delivered_from_rows(rows)
