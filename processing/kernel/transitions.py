"""The one service that changes a job's state: a guarded UPDATE against the allowed transitions.

A job is created in its first state (``preparing``; ``queued`` for a stored input, ``submission/stored_input.py``)
and from then on nothing else assigns ``ProcessingJob.state``, but two statements that keep ``ALLOWED``'s guards:
the claim's write (``queue/sql/claim_write.sql`` and ``claim_write_lone.sql``, queued → running) and the database
function ``processing_deliver`` (``queue/sql/deliver.sql``, installed by migration 0010: running → finalizing).
A transition into a terminal state also inserts the job's ``TerminalCommit`` row (the database allows one), the
outbox event of a succeeded, failed or cancelled job and the caller's further writes, in the same statement.
"""

import uuid

from django.db import connection
from django.utils import timezone

from foundation.database.prepared import prepared_cursor
from processing.kernel.outbox import WAKEUP_CHANNEL as OUTBOX_WAKEUP_CHANNEL
from processing.kernel.outbox import outbox_insert_sql
from processing.models import JobState, Phase, ProcessingJob, TerminalCommit
from processing.models.jobs import TERMINAL_STATES

ALLOWED: dict[str, frozenset[str]] = {
    JobState.PREPARING: frozenset(
        {JobState.QUEUED, JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED, JobState.EXPIRED}
    ),
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.CANCELLED, JobState.EXPIRED, JobState.FAILED}),
    JobState.RUNNING: frozenset({JobState.QUEUED, JobState.FINALIZING, JobState.FAILED, JobState.CANCELLED}),
    JobState.FINALIZING: frozenset({JobState.SUCCEEDED, JobState.FAILED}),
}

EVENT_KINDS = {
    JobState.SUCCEEDED: "processing.job.succeeded",
    JobState.FAILED: "processing.job.failed",
    JobState.CANCELLED: "processing.job.cancelled",
}


def job_transition(
    *,
    job_id: uuid.UUID,
    to: str,
    only_from: frozenset[str] | set[str] | None = None,
    guard: dict | None = None,
    along: tuple[tuple[str, list], ...] = (),
    condition: tuple[str, list] | None = None,
    **fields,
) -> bool:
    """Move the job to ``to`` if its state allows it (and is in ``only_from``) and its fields equal
    ``guard``; return whether it moved.

    ``along`` (terminal states only) are further writes made in the same statement when the job moves:
    each an SQL statement that selects from the CTE ``moved`` (the moved job's ``id``), with its parameters.
    ``condition`` (terminal states only) is one more SQL condition, with its parameters, that the job's row
    (``JOB_ROW``) must meet in the same statement.
    """
    sources = {state for state, targets in ALLOWED.items() if to in targets}
    if only_from is not None:
        sources &= set(only_from)
    if not sources:
        raise ValueError(f"no allowed transition into {to!r} from {only_from!r}")
    updates = {"state": to, **fields}
    if to not in TERMINAL_STATES:
        if along or condition:
            raise ValueError("only a terminal transition carries further writes or conditions")
        return ProcessingJob.objects.filter(pk=job_id, state__in=sources, **(guard or {})).update(**updates) == 1
    now = timezone.now()
    updates.update(completed_at=now, phase=Phase.COMPLETE, finalization_token=None, finalization_expires_at=None)
    return _terminal_commit(job_id, sorted(sources), to, updates, now, guard or {}, along, condition)


# How a transition's ``condition`` names the job's row.
JOB_ROW = ProcessingJob._meta.db_table


def _terminal_commit(job_id, sources: list[str], to: str, updates: dict, now, guard: dict, along, condition) -> bool:
    """The guarded UPDATE, the terminal commit row, the outbox event (if the state has one), the caller's
    further writes and the relay's wake-up: one statement, so one round trip, and atomic even outside a
    transaction. A second terminal commit of a job violates the terminal commit's primary key and fails
    the whole statement, as before."""
    assignments, params = _assignments(updates)
    conditions, condition_params = _assignments(guard, operator="IS NOT DISTINCT FROM", separator=" AND ")
    if condition is not None:
        conditions = " AND ".join(part for part in (conditions, condition[0]) if part)
        condition_params += condition[1]
    sql = f"""
        WITH moved AS (
            UPDATE {JOB_ROW} SET {assignments}
            WHERE id = %s AND state = ANY(%s) {"AND " + conditions if conditions else ""} RETURNING id
        ), committed AS (
            INSERT INTO {TerminalCommit._meta.db_table} (job_id, state, committed_at) SELECT id, %s, %s FROM moved
        )"""  # noqa: S608  table and column names are the models' own; every value is a parameter
    params += [job_id, sources, *condition_params, to, now]
    for number, (along_sql, along_params) in enumerate(along):
        sql += f", along_{number} AS ({along_sql})"
        params += along_params
    if to in EVENT_KINDS:
        event_sql, event_params = outbox_insert_sql(
            kind=EVENT_KINDS[to], payload={"job_id": str(job_id)}, now=now, rows_from="moved"
        )
        sql += f", event AS ({event_sql})"
        sql += " SELECT count(*), CASE WHEN count(*) > 0 THEN pg_notify(%s, '') END FROM moved"
        params += [*event_params, OUTBOX_WAKEUP_CHANNEL]
    else:
        sql += " SELECT count(*) FROM moved"
    with prepared_cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchone()[0] == 1


def _assignments(values: dict, operator: str = "=", separator: str = ", ") -> tuple[str, list]:
    """``column <operator> %s`` terms (``=`` for ``SET``; for a ``WHERE``, ``IS NOT DISTINCT FROM`` joined by
    ``AND``, so that None matches NULL as in the ORM's filter) and parameters for model field values, each
    converted as the ORM's update would."""
    parts, params = [], []
    for name, value in values.items():
        field = ProcessingJob._meta.get_field(name)
        parts.append(f"{connection.ops.quote_name(field.column)} {operator} %s")
        params.append(field.get_db_prep_save(value, connection))
    return separator.join(parts), params


def failure_fields(failure_class: str, code: str, message: str) -> dict:
    return {"failure_class": failure_class, "failure_code": code[:64], "failure_message": message[:2000]}
