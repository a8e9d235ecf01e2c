"""Idempotency keys for creation commands, scoped to (actor, endpoint) and bound to a command digest."""

import hashlib
from dataclasses import dataclass
from datetime import timedelta

from django.db import connection, transaction
from django.utils import timezone

from processing.exceptions import (
    IdempotencyKeyInvalid,
    IdempotencyKeyRequired,
    IdempotencyKeyReused,
    OutcomeUnresolved,
)
from processing.kernel.bundles import canonical_json
from processing.models import IdempotencyReservation

MAX_KEY_LENGTH = 128


def key_validate(raw: str | None) -> str:
    if raw is None or raw == "":
        raise IdempotencyKeyRequired()
    if len(raw) > MAX_KEY_LENGTH or any(not (0x20 <= ord(char) <= 0x7E) for char in raw):
        raise IdempotencyKeyInvalid(details={"max_length": MAX_KEY_LENGTH})
    return raw


def command_digest(*, operation: str, project_id, input_identity: str, options: dict) -> str:
    """The canonical command: key order, whitespace and defaulted options do not change it."""
    command = {
        "operation": operation,
        "project_id": str(project_id) if project_id else None,
        "input": input_identity,
        "options": options,
    }
    return hashlib.sha256(canonical_json(command)).hexdigest()


@dataclass(frozen=True)
class Scope:
    actor_id: int
    endpoint: str
    key: str
    digest: str


def reservation_insert(scope: Scope, *, hours: int) -> IdempotencyReservation | None:
    """Inside the caller's transaction: claim the key, or return None if another request holds it.

    ``ON CONFLICT DO NOTHING`` waits for a concurrent holder to commit, so the
    loser can then read the winner's committed reservation.
    """
    now = timezone.now()
    IdempotencyReservation.objects.filter(
        actor_id=scope.actor_id, endpoint=scope.endpoint, key=scope.key, expires_at__lte=now
    ).delete()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO {IdempotencyReservation._meta.db_table}
                (actor_id, endpoint, key, command_digest, created_at, expires_at)
            VALUES (%s, %s, %s, %s, %s, %s)
            ON CONFLICT (actor_id, endpoint, key) DO NOTHING
            RETURNING id
            """,  # noqa: S608  our table name; values are parameters
            [scope.actor_id, scope.endpoint, scope.key, scope.digest, now, now + timedelta(hours=hours)],
        )
        row = cursor.fetchone()
    return IdempotencyReservation.objects.get(pk=row[0]) if row else None


def reservation_resolve(scope: Scope):
    """In a fresh transaction: the job the key already names, or IdempotencyKeyReused.

    The key was held when this request tried to reserve it; if its reservation is gone by now (reaped once it
    expired) or names no job, the earlier request's outcome is unresolved: the client is told so and retries
    (seed 002: "report that the outcome remains unresolved"), never a 500.
    """
    with transaction.atomic():
        existing = (
            IdempotencyReservation.objects.filter(actor_id=scope.actor_id, endpoint=scope.endpoint, key=scope.key)
            .select_related("job")
            .first()
        )
    if existing is None or existing.job_id is None:
        raise OutcomeUnresolved(headers={"Retry-After": "1"})
    if existing.command_digest != scope.digest:
        raise IdempotencyKeyReused()
    return existing.job
