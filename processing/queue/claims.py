"""Claiming work (docs/architecture.md §4): one short transaction per acquire, database time for the lease.

Capacity is never stored: the agent offers its locally free permits, and in the
transaction that creates the attempt Core intersects the offer with the
session's registered slot ceiling minus its unexpired running claims.
Selection is FIFO by creation among claimable jobs of the offered operations,
``FOR UPDATE SKIP LOCKED``, skipping jobs whose requester or project already
holds its running limit (made exact by transaction-scoped advisory locks).

The steps run inside the database function ``processing_claim`` (migrations
0003, 0007 and 0009): the claim is on the path of every job and of pickup latency, and as
separate queries it cost nine round trips (capacity, count, candidate, lock,
recount, attempt, ticket, job, commit) where the function costs one. An acquire
offering several permits may ask for several claims; they are made one after the
other in that one call, each exactly as a single claim is. Each claim comes with a
download ticket for its input and an upload ticket per result role of its operation.
"""

import json
import uuid
from dataclasses import dataclass
from datetime import datetime

from config.prepared import prepared_cursor
from processing.configuration import limits
from processing.operations import operation_get
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
    uploads: dict[str, IssuedTicket]  # result role → its upload ticket


_CLAIM_SQL = (
    "SELECT * FROM processing_claim(%s, %s::jsonb, %s, %s, %s, %s, %s::uuid[], %s::uuid[], %s::text[], %s, %s::jsonb,"
    " %s::uuid[], %s::text[])"
)


def claims_acquire(*, session_id: uuid.UUID, offers: dict[str, int], count: int = 1) -> list[Claim]:
    """Create up to ``count`` attempts for this session within its offer, FIFO; empty when nothing fits.

    One statement, so outside a transaction it is its own: no BEGIN and COMMIT round trips. An agent
    with several free permits takes several jobs in one round trip instead of one each.
    """
    limit = limits()
    offers = {operation: permits for operation, permits in offers.items() if permits > 0}
    count = min(count, sum(offers.values()))
    if count <= 0:
        return []
    claim_ids, ticket_ids = [uuid.uuid4() for _ in range(count)], [uuid.uuid4() for _ in range(count)]
    roles = {
        operation: [[role.role, role.max_bytes] for role in operation_get(operation).result_roles]
        for operation in offers
        if operation_get(operation) is not None
    }
    upload_ids = [uuid.uuid4() for _ in range(count * max(map(len, roles.values()), default=0))]
    secrets = [ticket_secret_new() for _ in range(count + len(upload_ids))]
    with prepared_cursor() as cursor:
        cursor.execute(
            _CLAIM_SQL,
            [
                session_id,
                json.dumps(offers),
                limit.running_jobs_per_requester,
                limit.running_jobs_per_project,
                limit.lease_seconds,
                CANDIDATE_TRIES,
                claim_ids,
                ticket_ids,
                [digest for _, digest in secrets[:count]],
                limit.transfer_ticket_seconds,
                json.dumps(roles),
                upload_ids,
                [digest for _, digest in secrets[count:]],
            ],
        )
        rows = cursor.fetchall()
    secret_of = {ticket_id: secret for ticket_id, (secret, _) in zip(ticket_ids + upload_ids, secrets, strict=True)}
    return [_claim(row, secret_of) for row in rows]


def claim_acquire(*, session_id: uuid.UUID, offers: dict[str, int]) -> Claim | None:
    """Create the next attempt for this session, or return None when nothing fits its offer."""
    claims = claims_acquire(session_id=session_id, offers=offers, count=1)
    return claims[0] if claims else None


def _claim(row: tuple, secret_of: dict[uuid.UUID, str]) -> Claim:
    (
        job_id,
        attempt_id,
        number,
        operation,
        contract,
        lease_expires_at,
        blob_id,
        digest,
        options,
        profile,
        filename,
        project_id,
        size,
        ticket_expires_at,
        claim_id,
        ticket_id,
        upload_roles,
        upload_ids,
        upload_max_bytes,
    ) = row
    if isinstance(options, str):  # a raw cursor hands jsonb back as text
        options = json.loads(options)
    return Claim(
        job_id=job_id,
        attempt_id=attempt_id,
        attempt_number=number,
        claim_id=claim_id,
        operation=operation,
        processor_contract=contract,
        lease_expires_at=lease_expires_at,
        input_blob_id=blob_id,
        input_digest=digest,
        options=options,
        input_profile=profile,
        input_filename=filename,
        project_id=project_id,
        input_size=size,
        download=IssuedTicket(ticket_id, secret_of[ticket_id], ticket_expires_at, size),
        uploads={
            role: IssuedTicket(upload_id, secret_of[upload_id], ticket_expires_at, max_bytes)
            for role, upload_id, max_bytes in zip(upload_roles, upload_ids, upload_max_bytes, strict=True)
        },
    )
