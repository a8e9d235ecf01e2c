"""Pausing an operation: its queued jobs get no new claims (running attempts finish) until it is resumed.

The switch is a row in PostgreSQL (``OperationPause``), so it survives restarts and every Core process sees it
at its next claim: the candidates' statement passes over the paused operations (claims.py). Submissions are
still admitted within the limits, and the task center tells the author their job waits for a paused
operation. The queue-wait deadline does not run while an operation is paused: the deadline reaper passes over
a paused operation's queued jobs, and resuming moves their deadlines on by the pause's length, so no job
expires for an operator's pause.
"""

from django.db import transaction
from django.db.models import F

from operators import facade as operators
from processing.exceptions import OperationUnknown
from processing.kernel.clock import db_now
from processing.kernel.notify import queue_notify
from processing.models import JobState, OperationPause, ProcessingJob
from processing.operations import operation_get


def operation_pause(*, actor, operation: str) -> bool:
    """Pause ``operation``; False when it was paused already (nothing changes, nothing is recorded)."""
    _known(operation)
    with transaction.atomic(durable=True):
        _, created = OperationPause.objects.get_or_create(
            operation=operation, defaults={"paused_by": actor.get_username()}
        )
        if created:
            operators.action_record(actor=actor, action=operators.ActionKind.PAUSE, subject=operation, count=1)
    return created


def operation_resume(*, actor, operation: str) -> bool:
    """Resume ``operation``: its queued jobs' deadlines move on by the pause's length, and idle agents are woken
    for them. False when it was not paused."""
    _known(operation)
    with transaction.atomic(durable=True):
        pause = OperationPause.objects.select_for_update().filter(operation=operation).first()
        if pause is None:
            return False
        paused_for = db_now() - pause.paused_at
        queued = ProcessingJob.objects.filter(operation=operation, state=JobState.QUEUED, deadline_at__isnull=False)
        moved = queued.update(deadline_at=F("deadline_at") + paused_for)
        pause.delete()
        operators.action_record(
            actor=actor,
            action=operators.ActionKind.RESUME,
            subject=operation,
            count=1,
            outcome={"queued jobs' deadlines moved on": moved} if moved else {},
        )
        queue_notify(operation)  # delivered at commit: waiting agents claim at once
    return True


def paused_operations() -> dict[str, OperationPause]:
    return {pause.operation: pause for pause in OperationPause.objects.all()}


def _known(operation: str) -> None:
    if operation_get(operation) is None:
        raise OperationUnknown(details={"operation": operation})
