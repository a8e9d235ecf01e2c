"""Cancellation (docs/architecture.md §3, §9). It serializes with claims and delivery on the job row.

A running job's cancellation is a request to the worker holding its claim. The worker learns of it at once:
the cancelling transaction NOTIFYs the claim's session, which wakes that session's cancellation long-poll
(``cancellations_awaited``); the claim heartbeat's ``cancellation_requested`` remains the fallback.
"""

import time
import uuid

from django.db import connection, transaction

from foundation.database.prepared import prepared_cursor
from processing.exceptions import SessionGone, SessionNotFound
from processing.kernel.configuration import WorkerIdentity
from processing.kernel.transitions import job_transition
from processing.models import JobState, ProcessingJob, SessionState
from processing.queue.leases import CLAIM_CURRENT_SQL
from processing.queue.wakeups import CANCELLATION_CHANNEL, wakeups
from processing.selectors import job_visible


def job_cancel(*, actor_id: int, job_id) -> ProcessingJob:
    """Cancel the caller's job if it can be cancelled, and return it as it now is.

    Raises JobNotFound when the caller may not see the job.
    """
    job = job_visible(user_id=actor_id, job_id=job_id)
    return job_cancel_by_operator(job_id=job.pk)


def job_cancel_by_operator(*, job_id) -> ProcessingJob:
    """The same rules without the requester check, for operators (the admin).

    ``preparing``/``queued`` → ``cancelled`` at once; ``running`` → a request the worker is woken for (and sees
    on its next heartbeat if it does not listen); ``finalizing`` or terminal → unchanged. It joins a caller's
    transaction when there is one (an operator's bulk action), so its NOTIFY goes out only if that commits.
    """
    with transaction.atomic():
        job = ProcessingJob.objects.select_for_update().get(pk=job_id)
        if job.state in (JobState.PREPARING, JobState.QUEUED):
            job_transition(job_id=job.pk, to=JobState.CANCELLED, only_from={job.state})
        elif job.state == JobState.RUNNING and not job.cancellation_requested:
            ProcessingJob.objects.filter(pk=job.pk, state=JobState.RUNNING).update(cancellation_requested=True)
            _claim_session_notify(job.pk)
    return ProcessingJob.objects.get(pk=job_id)


def _claim_session_notify(job_id) -> None:
    """NOTIFY the session holding the job's running claim. PostgreSQL delivers it when the cancelling transaction
    commits, so the woken long-poll reads the request, never the state before it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_notify(%s, session_id::text) FROM processing_processingattempt "
            "WHERE job_id = %s AND state = 'running' AND session_id IS NOT NULL",
            [CANCELLATION_CHANNEL, job_id],
        )


def job_is_cancellable(job: ProcessingJob) -> bool:
    """Would a cancel change anything? Queued work stops at once; running work is asked to stop."""
    return job.state in (JobState.PREPARING, JobState.QUEUED) or (
        job.state == JobState.RUNNING and not job.cancellation_requested
    )


# The session's liveness as its heartbeat judges it, and its current claims whose cancellation was requested
# or that were asked to give their slot back (queue/fair_share.py): the worker stops both alike.
_REQUESTED_SQL = f"""
    SELECT session.state IN ('{SessionState.ACTIVE}', '{SessionState.DRAINING}') AND session.expires_at > now(),
           ARRAY(SELECT attempt.claim_id FROM processing_processingattempt AS attempt
                 JOIN processing_processingjob AS job ON job.id = attempt.job_id
                 WHERE attempt.session_id = session.id AND {CLAIM_CURRENT_SQL}
                   AND (job.cancellation_requested OR attempt.yield_requested_at IS NOT NULL)
                 ORDER BY attempt.started_at)
    FROM processing_workersession AS session
    WHERE session.id = %s AND session.identity = %s
"""  # noqa: S608  the fragments are constants; every value is a parameter


def cancellations_requested(*, identity: WorkerIdentity, session_id: uuid.UUID) -> list[uuid.UUID]:
    """The session's current claims whose cancellation was requested; SessionNotFound for another identity's or
    an unknown session, SessionGone for one that ended or lapsed."""
    with prepared_cursor() as cursor:
        row = cursor.execute(_REQUESTED_SQL, [session_id, identity.name]).fetchone()
    if row is None:
        raise SessionNotFound()
    live, claim_ids = row
    if not live:
        raise SessionGone()
    return list(claim_ids)


def cancellations_awaited(
    *, identity: WorkerIdentity, session_id: uuid.UUID, known: set[uuid.UUID], wait_seconds: float
) -> list[uuid.UUID]:
    """``cancellations_requested`` once it names a claim not in ``known`` (those the worker already stops), or as
    it is after ``wait_seconds``; woken by the cancellation NOTIFY, not polled."""
    deadline = time.monotonic() + wait_seconds
    # Registered before the first read: a cancellation committed between a read and the wait still wakes it.
    with wakeups.cancellation_watch(session_id) as watch:
        while True:
            requested = cancellations_requested(identity=identity, session_id=session_id)
            remaining = deadline - time.monotonic()
            if set(requested) - known or remaining <= 0:
                return requested
            if not connection.in_atomic_block:
                connection.close()  # hold no database connection while waiting: every busy agent waits here
            watch.wait(remaining)
