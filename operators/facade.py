"""What other contexts may ask Operators: whether a user may act, and the audit record of an action."""

from collections import Counter

from django.db import connection, transaction
from django.db.models import F

from operators.models import ActionKind, OperatorAction
from operators.roles import ACTING_GROUP, READ_ONLY_GROUP, can_act

__all__ = [
    "ACTING_GROUP",
    "READ_ONLY_GROUP",
    "ActionKind",
    "ActionTally",
    "NotInTransaction",
    "action_record",
    "can_act",
]


class NotInTransaction(RuntimeError):
    """An audit record must commit or roll back with the action it records."""


def action_record(*, actor, action: ActionKind, subject: str, count: int, outcome: dict | None = None) -> None:
    """Record an operator's action, in the caller's transaction (the one that carries the action out)."""
    _in_transaction(action)
    OperatorAction.objects.create(
        actor_id=actor.pk,
        actor_name=actor.get_username(),
        action=action,
        subject=subject[:500],
        count=count,
        outcome=outcome or {},
    )


class ActionTally:
    """The one audit row of an action carried out over many jobs in many transactions (a bulk action's
    batches, one retry after another): each ``add`` runs in the transaction that changed those jobs, so the row
    always says exactly what has committed; the first creates it. ``close`` writes the row of an action that
    reached nothing."""

    def __init__(self, *, actor, action: ActionKind, subject: str):
        self.actor, self.action, self.subject = actor, action, subject
        self.record_id: int | None = None
        self.outcomes: Counter = Counter()  # what the committed and the current transactions did

    def add(self, outcome: str, count: int = 1) -> None:
        _in_transaction(self.action)
        self.outcomes[outcome] += count
        if self.record_id is not None:
            updated = OperatorAction.objects.filter(pk=self.record_id).update(count=F("count") + count)
            if updated:  # not rolled back with the transaction that created it
                row = OperatorAction.objects.select_for_update().get(pk=self.record_id)
                row.outcome[outcome] = row.outcome.get(outcome, 0) + count
                row.save(update_fields=["outcome"])
                return
        row = OperatorAction.objects.create(
            actor_id=self.actor.pk,
            actor_name=self.actor.get_username(),
            action=self.action,
            subject=self.subject[:500],
            count=count,
            outcome={outcome: count},
        )
        self.record_id = row.pk

    def close(self) -> None:
        if self.record_id is None:
            with transaction.atomic():
                action_record(actor=self.actor, action=self.action, subject=self.subject, count=0)


def _in_transaction(action) -> None:
    if not connection.in_atomic_block:
        raise NotInTransaction(action)
