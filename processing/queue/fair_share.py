"""Fair slots held against running work (docs/architecture.md §4).

The claim passes over a requester who holds its fair share of an operation's slots while another requester's
job waits (``ProcessingJob.objects.within_fair_share``), but work that started while nobody waited keeps its
slots: one author's two runaway builds would hold both LaTeX slots for the whole wall limit. So the
maintenance loop asks the newest builds a requester holds beyond its share to give their slots back, when a
job of another requester below its share is waiting to be claimed. The worker hears of it as of a
cancellation (the cancellation long-poll and the claim heartbeat), stops the processor and reports it; Core
then ends the attempt ``released`` and queues the job again at its old place without using an attempt
(``attempt_yielded``). The claim's fair share keeps the requeued job waiting until the other requester's job
has a slot, so nothing flaps.

A build already uploading its result is left to finish: its slot frees in a moment anyway.
"""

import logging
from datetime import timedelta

from django.db import connection

from processing.kernel.attempt_log import attempt_log
from processing.kernel.configuration import limits
from processing.kernel.transitions import job_transition
from processing.models import AttemptState, JobState, Phase, ProcessingAttempt
from processing.queue.leases import attempt_end
from processing.queue.wakeups import CANCELLATION_CHANNEL

logger = logging.getLogger(__name__)

FAIR_SHARE_YIELD = "fair_share_yield"

# Requesters over their share of an operation, where a job of another requester below its share waits to be
# claimed (its backoff over, its operation not paused); their newest running attempts beyond the share are
# marked, and each marked attempt's session is woken on the cancellation channel. Attempts marked before are
# chosen again by the same order, so a pass changes nothing until they stop.
_YIELDS_REQUEST_SQL = f"""
    WITH held AS (
        SELECT job.operation, job.requester_id, count(*) AS running, processing_fair_share(job.operation) AS share
        FROM processing_processingjob AS job
        WHERE job.state = '{JobState.RUNNING}'
        GROUP BY job.operation, job.requester_id
    ), over_share AS (
        SELECT held.* FROM held
        WHERE held.running > held.share
          AND NOT EXISTS (SELECT FROM processing_operationpause AS pause WHERE pause.operation = held.operation)
          AND EXISTS (
              SELECT FROM processing_processingjob AS waiting
              WHERE waiting.state = '{JobState.QUEUED}' AND waiting.operation = held.operation
                AND waiting.requester_id <> held.requester_id
                AND (waiting.next_attempt_at IS NULL OR waiting.next_attempt_at <= now())
                AND NOT EXISTS (
                    SELECT FROM held AS theirs
                    WHERE theirs.operation = held.operation AND theirs.requester_id = waiting.requester_id
                      AND theirs.running >= theirs.share
                )
          )
    ), ranked AS (
        SELECT attempt.id, over_share.running - over_share.share AS excess,
               row_number() OVER (PARTITION BY job.operation, job.requester_id ORDER BY attempt.started_at DESC)
                   AS newest
        FROM over_share
        JOIN processing_processingjob AS job
          ON job.operation = over_share.operation AND job.requester_id = over_share.requester_id
             AND job.state = '{JobState.RUNNING}' AND NOT job.cancellation_requested
        JOIN processing_processingattempt AS attempt ON attempt.job_id = job.id
             AND attempt.state = '{AttemptState.RUNNING}' AND attempt.phase = '{Phase.PROCESSING}'
    ), marked AS (
        UPDATE processing_processingattempt AS attempt SET yield_requested_at = now()
        FROM ranked
        WHERE attempt.id = ranked.id AND ranked.newest <= ranked.excess AND attempt.yield_requested_at IS NULL
        RETURNING attempt.session_id
    )
    SELECT count(*), count(pg_notify(%s, marked.session_id::text)) FROM marked
"""  # noqa: S608  the fragments are the models' constants; the one value is a parameter


def fair_share_yields_request() -> int:
    """Ask the builds held beyond their requester's fair share, while another requester waits, to give their
    slots back; returns how many were asked. One statement, delivered to the workers when it commits."""
    with connection.cursor() as cursor:
        cursor.execute(_YIELDS_REQUEST_SQL, [CANCELLATION_CHANNEL])
        marked, _ = cursor.fetchone()
    if marked:
        logger.info("fair share: builds asked to give their slots back", extra={"count": marked})
    return marked


def attempt_yielded(attempt: ProcessingAttempt, now) -> None:
    """Inside the caller's transaction (job locked): the worker stopped an attempt asked to yield. It ends
    released and its job is queued again without using an attempt, keeping its place in the queue."""
    logger.info("attempt yielded its slot", extra=attempt_log(attempt))
    attempt_end(
        attempt,
        AttemptState.RELEASED,
        now,
        failure_code=FAIR_SHARE_YIELD,
        failure_message="Stopped to give its slot to another requester's waiting job; it runs again later.",
    )
    job_transition(
        job_id=attempt.job_id,
        to=JobState.QUEUED,
        only_from={JobState.RUNNING},
        phase=Phase.WAITING_FOR_WORKER,
        deadline_at=now + timedelta(seconds=limits().queue_wait_seconds),
    )
    from processing.kernel.notify import queue_notify

    queue_notify(attempt.operation)


def yield_is_wanted(attempt: ProcessingAttempt) -> bool:
    return attempt.yield_requested_at is not None and not attempt.job.cancellation_requested
