"""The end of a claim: delivery, failure or release, each fenced by the current claim.

Delivery acceptance and cancellation serialize on the job row: if a
cancellation request committed first, the delivery is refused and the staged
output stays unpublished; once delivery is accepted the job is ``finalizing``
and no longer cancellable.
"""

import json
import logging
import uuid
from dataclasses import dataclass
from datetime import timedelta
from typing import NamedTuple, NoReturn

from django.db import transaction

from foundation.database.prepared import prepared_cursor
from processing.exceptions import ClaimLost, JobCancelled, OffersInvalid, OutputRejected
from processing.kernel.attempt_log import attempt_log
from processing.kernel.configuration import limits
from processing.kernel.delivered import Delivered, delivered_columns, delivered_from_rows
from processing.kernel.transitions import job_transition
from processing.models import AttemptState, FailureClass, JobState, Phase
from processing.operations import REGISTRY
from processing.queue.fair_share import attempt_yielded, yield_is_wanted
from processing.queue.leases import attempt_current, attempt_end, attempt_failed

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Diagnostics:
    log: str = ""
    entries: tuple = ()


def _bounded(log: str) -> str:
    limit = limits().diagnostic_bytes
    encoded = log.encode("utf-8", "replace")
    if len(encoded) <= limit:
        return log
    half = limit // 2
    marker = b"\n[... log cut by Quire: kept the first and last parts ...]\n"
    return (encoded[:half] + marker + encoded[-half:]).decode("utf-8", "replace")


class Accepted(NamedTuple):
    job_id: uuid.UUID
    token: uuid.UUID  # the finalization's
    offers: dict[str, int]  # the delivery's offers, checked; none when its session may claim no more
    delivered: Delivered  # finalization's input, as the delivery left it


class AlreadyDelivered(NamedTuple):
    """The claim was delivered before: a retried delivery whose first answer was never stored."""

    job_id: uuid.UUID
    job_state: str


_ACCEPTED_COLUMNS = delivered_columns(
    job="(accepted.job_row)",
    attempt="(accepted.attempt_row)",
    staged="(accepted.staged_row)",
    data="accepted.staged_data",
)
_DELIVER_SQL = f"""
    SELECT accepted.outcome, accepted.job_id, accepted.missing_roles, accepted.claimable, accepted.invalid_offers,
           {_ACCEPTED_COLUMNS}
    FROM processing_deliver(%s, %s, %s::jsonb, %s::jsonb, %s, %s, %s, %s::jsonb) AS accepted
"""  # noqa: S608  the columns are the models' own; every value is a parameter


def delivery_accept(*, claim_id: uuid.UUID, diagnostics: Diagnostics) -> tuple[uuid.UUID, uuid.UUID]:
    """Accept the claim's staged outputs; the job becomes ``finalizing``. Returns (job id, token).

    One statement (the database function ``processing_deliver``, processing/queue/sql/deliver.sql), so outside a
    transaction it is its own. Raises JobCancelled (after committing the cancellation) when a cancel
    request came first.
    """
    accepted = _deliver(claim_id, None, {}, diagnostics)
    if isinstance(accepted, AlreadyDelivered):
        raise ClaimLost()
    return accepted.job_id, accepted.token


def delivery_accept_held(
    *, claim_id: uuid.UUID, identity: str, offers: dict[str, int], diagnostics: Diagnostics
) -> Accepted | AlreadyDelivered:
    """``delivery_accept`` for a worker: ClaimLost also when no session of ``identity`` made the claim, and
    OffersInvalid, before anything changes, for ``offers`` beyond what the claim's session registered."""
    return _deliver(claim_id, identity, offers, diagnostics)


def _deliver(
    claim_id: uuid.UUID, identity: str | None, offers: dict[str, int], diagnostics: Diagnostics
) -> Accepted | AlreadyDelivered:
    token = uuid.uuid4()
    with prepared_cursor() as cursor:
        cursor.execute(
            _DELIVER_SQL,
            [
                claim_id,
                identity,
                json.dumps(offers),
                _REQUIRED_ROLES,
                token,
                limits().finalization_lease_seconds,
                _bounded(diagnostics.log),
                json.dumps(list(diagnostics.entries)[:500]),
            ],
        )
        rows = cursor.fetchall()
    outcome, job_id, missing, claimable, invalid = rows[0][:5]
    if outcome == "accepted":
        return Accepted(job_id, token, offers if claimable else {}, delivered_from_rows([row[5:] for row in rows]))
    if outcome == "already_delivered":
        return AlreadyDelivered(job_id, delivered_from_rows([rows[0][5:]]).job.state)
    if outcome == "offers_invalid":
        raise OffersInvalid(details={"invalid": json.loads(invalid) if isinstance(invalid, str) else invalid})
    if outcome == "missing_outputs":
        raise OutputRejected("Required outputs were not uploaded.", details={"missing": missing})
    if outcome == "cancellation_requested":
        _cancel_on_delivery(claim_id)
    raise ClaimLost()


# Each operation's required result roles, as the delivery function reads them.
_REQUIRED_ROLES = json.dumps(
    {name: [role.role for role in operation.result_roles if role.required] for name, operation in REGISTRY.items()}
)


def _cancel_on_delivery(claim_id: uuid.UUID) -> NoReturn:
    """A cancellation request came first (one is never withdrawn): the attempt and the job end cancelled."""
    with transaction.atomic():
        attempt, now = attempt_current(claim_id, lock_job=True)
        attempt_end(attempt, AttemptState.CANCELLED, now)
        job_transition(job_id=attempt.job_id, to=JobState.CANCELLED, only_from={JobState.RUNNING})
    raise JobCancelled()


def attempt_fail(*, claim_id: uuid.UUID, failure_class: str, code: str, message: str, diagnostics: Diagnostics) -> str:
    """Record a classified failure of the claim and apply the retry policy; returns the job's new state."""
    if failure_class not in FailureClass.values:
        raise OutputRejected("Unknown failure class.", details={"allowed": FailureClass.values})
    with transaction.atomic():
        attempt, now = attempt_current(claim_id, lock_job=True)
        job = attempt.job
        if failure_class == FailureClass.WORKER_INTERRUPTED and yield_is_wanted(attempt):
            attempt_yielded(attempt, now)  # stopped to give its slot back, not failed: no attempt is used
            return JobState.QUEUED
        job.diagnostic_log, job.diagnostics = _bounded(diagnostics.log), list(diagnostics.entries)[:500]
        job.save(update_fields=["diagnostic_log", "diagnostics"])
        attempt_failed(attempt, now, failure_class=failure_class, code=code, message=message)
        return type(job).objects.values_list("state", flat=True).get(pk=job.pk)


def attempt_release(*, claim_id: uuid.UUID) -> str:
    """Give the job back untouched (the agent is draining): it is queued again and no attempt is used up."""
    with transaction.atomic():
        attempt, now = attempt_current(claim_id, lock_job=True)
        logger.info("attempt released", extra=attempt_log(attempt))
        attempt_end(attempt, AttemptState.RELEASED, now)
        job = attempt.job
        if job.cancellation_requested:
            job_transition(job_id=job.pk, to=JobState.CANCELLED, only_from={JobState.RUNNING})
        else:
            job_transition(
                job_id=job.pk,
                to=JobState.QUEUED,
                only_from={JobState.RUNNING},
                phase=Phase.WAITING_FOR_WORKER,
                deadline_at=now + timedelta(seconds=limits().queue_wait_seconds),  # a fresh wait, as after a retry
            )
            from processing.kernel.notify import queue_notify

            queue_notify(job.operation)
        return type(job).objects.values_list("state", flat=True).get(pk=job.pk)
