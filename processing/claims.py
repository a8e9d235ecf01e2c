"""Claiming work (architecture §7): one short transaction per claim, database time for the lease.

Capacity is never stored: the agent offers its locally free permits, and in the
transaction that creates the attempt Core intersects the offer with the
session's registered slot ceiling minus its unexpired running claims.
Selection is FIFO by creation among claimable jobs of the offered operations,
``FOR UPDATE SKIP LOCKED``, skipping jobs whose requester or project already
holds its running limit (made exact by transaction-scoped advisory locks).

The steps run inside the database function ``processing_claim`` (migration
0003): the claim is on the path of every job and of pickup latency, and as
separate queries it cost nine round trips (capacity, count, candidate, lock,
recount, attempt, ticket, job, commit) where the function costs one.
"""

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models.expressions import RawSQL

from processing.configuration import limits
from processing.transfers import IssuedTicket, ticket_secret_new

CANDIDATE_TRIES = 8


@dataclass(frozen=True)
class Claim:
    job_id: uuid.UUID
    attempt_id: int
    attempt_number: int
    claim_id: uuid.UUID
    operation: str
    processor_contract: str
    lease_expires_at: datetime
    input_blob_id: int
    input_digest: str
    options: dict
    input_profile: str
    input_filename: str
    project_id: uuid.UUID | None
    input_size: int
    download: IssuedTicket


# The transaction's now() as an expression, so a query can carry it instead of a round trip of its own.
TRANSACTION_NOW = RawSQL("now()", [])


def db_now() -> datetime:
    """The transaction's ``now()``: the authority for every lease decision."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0]


_CLAIM_SQL = "SELECT * FROM processing_claim(%s, %s::jsonb, %s, %s, %s, %s, %s, %s, %s, %s)"


def claim_acquire(*, session_id: uuid.UUID, offers: dict[str, int]) -> Claim | None:
    """Create the next attempt for this session, or return None when nothing fits its offer.

    One statement, so outside a transaction it is its own: no BEGIN and COMMIT round trips.
    """
    limit = limits()
    offers = {operation: permits for operation, permits in offers.items() if permits > 0}
    if not offers:
        return None
    claim_id, ticket_id = uuid.uuid4(), uuid.uuid4()
    secret, secret_sha256 = ticket_secret_new()
    with connection.cursor() as cursor:
        cursor.execute(
            _CLAIM_SQL,
            [session_id, json.dumps(offers), limit.running_jobs_per_requester, limit.running_jobs_per_project,
             limit.lease_seconds, CANDIDATE_TRIES, claim_id, ticket_id, secret_sha256,
             limit.transfer_ticket_seconds],
        )  # fmt: skip
        row = cursor.fetchone()
    if row is None:
        return None
    (job_id, attempt_id, number, operation, contract, lease_expires_at, blob_id, digest, options, profile,
     filename, project_id, size, ticket_expires_at) = row  # fmt: skip
    if isinstance(options, str):  # a raw cursor hands jsonb back as text
        options = json.loads(options)
    return Claim(
        job_id=job_id, attempt_id=attempt_id, attempt_number=number, claim_id=claim_id, operation=operation,
        processor_contract=contract, lease_expires_at=lease_expires_at, input_blob_id=blob_id,
        input_digest=digest, options=options, input_profile=profile, input_filename=filename,
        project_id=project_id, input_size=size,
        download=IssuedTicket(ticket_id, secret, ticket_expires_at, size),
    )  # fmt: skip
