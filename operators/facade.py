"""What other contexts may ask Operators: whether a user may act, and the audit record of an action."""

from collections import Counter
from collections.abc import Mapping

from django.db import connection, transaction

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
        self.add_counts({outcome: count})

    def add_counts(self, counts: Mapping[str, int]) -> None:
        """What this transaction did, by outcome: one locked read and one write of the row, however many."""
        _in_transaction(self.action)
        self.outcomes.update(counts)
        row = OperatorAction.objects.select_for_update().filter(pk=self.record_id).first() if self.record_id else None
        if row is None:  # the first, or the transaction that created it rolled back
            row = OperatorAction(
                actor_id=self.actor.pk,
                actor_name=self.actor.get_username(),
                action=self.action,
                subject=self.subject[:500],
                count=0,
                outcome={},
            )
        row.count += sum(counts.values())
        row.outcome = dict(Counter(row.outcome) + Counter(counts))
        row.save()
        self.record_id = row.pk

    def close(self) -> None:
        if self.record_id is None:
            with transaction.atomic():
                action_record(actor=self.actor, action=self.action, subject=self.subject, count=0)


def _in_transaction(action) -> None:
    if not connection.in_atomic_block:
        raise NotInTransaction(action)
