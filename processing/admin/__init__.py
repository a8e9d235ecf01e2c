"""The operators' admin: read-only history of jobs, attempts, artifacts, blobs, workers and the outbox, the
live Overview with its pause, resume and drain switches, and the job actions.

Nothing here edits a row. Every action calls the same services as the API and
the task center: ``job_cancel_by_operator`` (the API's cancellation rules),
``job_retry_by_operator`` (a new linked job; the failed one is never reopened),
``operation_pause``/``operation_resume`` and ``session_drain_by_operator``; each
writes its audit row (Operators' facade) in the action's own transaction.

- ``read_only``: the base classes (no add, change or delete) and links between pages.
- ``jobs``: the job list and the job's page.
- ``bulk``: cancel and retry on a selection or on every job a filter matches, in batches.
- ``overview``: the Overview, its charts' data and its switches.
- ``fleet``: worker sessions, their processors and live claims.
- ``history``: attempts, artifacts, blobs, outbox events and idempotency reservations.
"""

from processing.admin import fleet, history, jobs

__all__ = ["fleet", "history", "jobs"]
