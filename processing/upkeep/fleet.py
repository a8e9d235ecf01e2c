"""The worker fleet as operators act on it: draining a session, and ending drained ones.

Draining a session (the agent's own request on SIGTERM, or an operator's) stops its claims at once: the
candidates' statement offers only active sessions' processors. Its running attempts go on to deliver. The
agent learns of an operator's drain from its next session heartbeat (the answer's ``state``), stops
claiming, lets its jobs finish and exits. Once a draining session has no running attempt left the
maintenance loop closes it: the session has ended.
"""

import uuid

from django.db import connection, transaction
from django.db.models import Exists, OuterRef

from operators import facade as operators
from processing.exceptions import SessionNotFound
from processing.kernel.advisory import advisory_key
from processing.models import AttemptState, ProcessingAttempt, SessionState, WorkerSession
from processing.queue.claims import SESSION_LOCK as CLAIMING_SESSION_LOCK


def session_drain_by_operator(*, actor, session_id: uuid.UUID) -> bool:
    """Drain a live session; False when it was not active (draining already, or ended)."""
    with transaction.atomic(durable=True):
        session = WorkerSession.objects.select_for_update().filter(pk=session_id).first()
        if session is None:
            raise SessionNotFound()
        if session.state != SessionState.ACTIVE:
            return False
        session.state = SessionState.DRAINING
        session.save(update_fields=["state"])
        running = session.attempts.filter(state=AttemptState.RUNNING).count()
        operators.action_record(
            actor=actor,
            action=operators.ActionKind.DRAIN,
            subject=f"worker session {session.identity}/{session.instance} ({session.pk})",
            count=1,
            outcome={"running attempts left to finish": running},
        )
    return True


def drained_sessions_close() -> int:
    """Close draining sessions that hold no running attempt (a reaper step). Each under its claims' advisory
    lock, then counted afresh: a claim that read the session as active before the drain has committed its
    attempt by then, and the session stays open for it."""
    closed = 0
    for session_id in WorkerSession.objects.filter(state=SessionState.DRAINING).values_list("pk", flat=True):
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [advisory_key(CLAIMING_SESSION_LOCK, session_id)])
            running = ProcessingAttempt.objects.filter(session_id=OuterRef("pk"), state=AttemptState.RUNNING)
            closed += (
                WorkerSession.objects.filter(pk=session_id, state=SessionState.DRAINING)
                .exclude(Exists(running))
                .update(state=SessionState.CLOSED)
            )
    return closed
