"""Worker sessions: registration, liveness heartbeats and drain. Capacity is never reported here."""

import json
import uuid
from datetime import timedelta
from typing import NamedTuple

from django.db import transaction

import quire_wire
from foundation.database.prepared import prepared_cursor
from processing.exceptions import ProcessorOutOfScope, ProtocolInvalid, SessionGone, SessionNotFound
from processing.kernel.clock import db_now
from processing.kernel.configuration import WorkerIdentity, limits
from processing.kernel.notify import queue_notify
from processing.models import SessionState, WorkerProcessor, WorkerSession
from processing.operations import REGISTRY

PROTOCOL_VERSION = quire_wire.PROTOCOL_VERSION
MAX_SLOTS = 256


def _processors_validate(identity: WorkerIdentity, processors: list[dict]) -> None:
    if not processors:
        raise ProtocolInvalid("A session declares at least one processor.")
    operations = [item["operation"] for item in processors]
    if len(set(operations)) != len(operations):
        raise ProtocolInvalid("Each operation is declared once per session.")
    for item in processors:
        if item["operation"] not in REGISTRY or item["operation"] not in identity.operations:
            raise ProcessorOutOfScope(details={"operation": item["operation"], "identity": identity.name})
        if not 1 <= item["slots"] <= MAX_SLOTS:
            raise ProtocolInvalid(f"slots must be between 1 and {MAX_SLOTS}.")


def session_register(
    *, identity: WorkerIdentity, instance: str, protocol_version: str, processors: list[dict]
) -> WorkerSession:
    if protocol_version != PROTOCOL_VERSION:
        raise ProtocolInvalid(
            f"This Core speaks protocol {PROTOCOL_VERSION}.", details={"supported": [PROTOCOL_VERSION]}
        )
    _processors_validate(identity, processors)
    with transaction.atomic(durable=True):
        now = db_now()
        session = WorkerSession.objects.create(
            identity=identity.name,
            instance=instance[:128],
            protocol_version=protocol_version,
            registered_at=now,
            last_heartbeat_at=now,
            expires_at=now + timedelta(seconds=limits().session_ttl_seconds),
        )
        WorkerProcessor.objects.bulk_create(
            [
                WorkerProcessor(
                    session=session,
                    operation=item["operation"],
                    processor_contract=item["processor_contract"],
                    runtime_version=item.get("runtime_version", ""),
                    slots=item["slots"],
                )
                for item in processors
            ]
        )
    return session


# Every acquire asks this before it claims: one plain statement for what took three ORM queries.
_SLOTS_SQL = """
    SELECT session.state, session.expires_at <= now(),
           coalesce(jsonb_object_agg(processor.operation, processor.slots)
                    FILTER (WHERE processor.id IS NOT NULL), '{}'::jsonb)
    FROM processing_workersession AS session
    LEFT JOIN processing_workerprocessor AS processor ON processor.session_id = session.id
    WHERE session.id = %s AND session.identity = %s
    GROUP BY session.id
"""


def session_slots(identity: WorkerIdentity, session_id: uuid.UUID) -> dict[str, int]:
    """The registered slots per operation of a session that may claim now; SessionNotFound for another
    identity's or an unknown session, SessionGone for one that ended or lapsed: it must register again, and
    silence here would starve it."""
    with prepared_cursor() as cursor:
        cursor.execute(_SLOTS_SQL, [session_id, identity.name])
        row = cursor.fetchone()
    if row is None:
        raise SessionNotFound()
    slots = _claimable_slots(*row)
    if slots is None:
        raise SessionGone()
    return slots


def _claimable_slots(state: str, lapsed: bool, slots) -> dict[str, int] | None:
    """The registered slots per operation, or None when the session has ended or lapsed (the delivery function
    of migration 0010 applies the same rule to a delivery's offers)."""
    if (state == SessionState.ACTIVE and lapsed) or state in (SessionState.EXPIRED, SessionState.CLOSED):
        return None
    return json.loads(slots) if isinstance(slots, str) else slots  # a raw cursor hands jsonb back as text


def session_of(identity: WorkerIdentity, session_id: uuid.UUID) -> WorkerSession:
    session = WorkerSession.objects.filter(pk=session_id, identity=identity.name).first()
    if session is None:
        raise SessionNotFound()
    return session


def session_heartbeat(*, identity: WorkerIdentity, session_id: uuid.UUID, health: dict[str, bool]) -> WorkerSession:
    """Liveness and processor health; extends the session. An expired session must register again."""
    with transaction.atomic(durable=True):
        now = db_now()
        session = session_of(identity, session_id)
        live = WorkerSession.objects.filter(
            pk=session.pk, state__in=[SessionState.ACTIVE, SessionState.DRAINING], expires_at__gt=now
        ).update(last_heartbeat_at=now, expires_at=now + timedelta(seconds=limits().session_ttl_seconds))
        if not live:
            raise SessionGone()
        for operation, healthy in health.items():
            session.processors.filter(operation=operation).update(healthy=bool(healthy))
        session.refresh_from_db()
        return session


def session_drain(*, identity: WorkerIdentity, session_id: uuid.UUID) -> WorkerSession:
    """No new claims for this session; its running claims continue to completion. Its long-polls for work are
    woken (the queue's NOTIFY) and answer at once with nothing, so an idle agent stops without waiting them out."""
    session = session_of(identity, session_id)
    with transaction.atomic(durable=True):
        WorkerSession.objects.filter(pk=session.pk, state=SessionState.ACTIVE).update(state=SessionState.DRAINING)
        queue_notify("session_drained")
    session.refresh_from_db()
    return session


def session_takes_claims(session_id: uuid.UUID) -> bool:
    """Whether the session may still be given claims (not draining, not ended)."""
    return WorkerSession.objects.filter(pk=session_id, state=SessionState.ACTIVE).exists()


# Every claim-scoped worker call asks this first: one plain statement on the claim's unique index.
_CLAIM_HOLDER_SQL = """
    SELECT attempt.job_id, attempt.session_id FROM processing_processingattempt AS attempt
    JOIN processing_workersession AS session ON session.id = attempt.session_id
    WHERE attempt.claim_id = %s AND session.identity = %s
"""


class ClaimHolder(NamedTuple):
    job_id: uuid.UUID
    session_id: uuid.UUID


def claim_holder(*, claim_id: uuid.UUID, identity: str) -> ClaimHolder | None:
    """The job and session of ``claim_id`` if a session of ``identity`` made that claim; None otherwise
    (unknown, or another identity's: both look alike to the caller)."""
    with prepared_cursor() as cursor:
        cursor.execute(_CLAIM_HOLDER_SQL, [claim_id, identity])
        row = cursor.fetchone()
    return ClaimHolder(*row) if row else None
