"""What a claim writes (docs/architecture.md §4): its attempt, its download and upload tickets and its job's
queued → running move, in one statement (``sql/claim_write.sql``), and the check a lone candidate's write
makes of itself (``_admitted_query``). ``LoneWrite`` is that statement for a claim sent before it knows its
candidate (``sql/claim_write_lone.sql``): it writes the candidate the locking candidates' statement kept for
the rest of its transaction (``kept_candidates``). Choosing the candidates is processing/queue/claims.py's.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.db.models import Count, F, OuterRef, Subquery
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce, Now

from foundation.database.prepared import prepared_cursor, statements_connection
from processing.kernel.configuration import deployment
from processing.kernel.transfers import IssuedTicket, ticket_secret_new
from processing.models import AttemptState, ProcessingAttempt, ProcessingJob, TransferKind, WorkerProcessor
from processing.operations import operation_get
from processing.queue.prepared_query import PreparedQuery


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


@dataclass
class Candidate:
    id: uuid.UUID
    operation: str
    requester_id: int
    project_id: uuid.UUID | None
    attempt_count: int
    input_blob_id: int
    input_digest: str
    options: dict
    input_profile: str
    input_filename: str
    input_size: int
    processor_contract: str
    slots: int
    now: datetime


def partitions_of(operations) -> tuple:
    """The partitions the operations belong to, in the deployment's order: the claim's statements' constants."""
    return tuple(partition for partition in deployment().partitions if any(map(partition.holds, operations)))


def holding_slots(session_id):
    """The session's attempts that hold one of its slots: running, with an unexpired lease."""
    return ProcessingAttempt.objects.filter(
        session_id=session_id, state=AttemptState.RUNNING, lease_expires_at__gt=Now()
    )


def written(session_id, chosen: list[Candidate], limit, *, admitting: bool, committing: bool = False) -> list[Claim]:
    """Write the claims of ``chosen``. ``admitting`` (one candidate, its locks held, no recount yet): the
    statement itself first checks the candidate against the running limits and the session's slots, with the
    same rules (``within_running_limits``, ``_admitted_query``), and writes nothing if it is over one.
    ``committing``: the transaction's COMMIT is sent with the write, in its round trip."""
    writes = _Writes.of(session_id, chosen, limit)
    if admitting:
        [candidate] = chosen
        admitted, admitted_params = _ADMITTED.named(
            "admitted",
            literals=(partitions_of([candidate.operation]),),
            session_id=session_id,
            operations=[candidate.operation],
        )
        sql, params = _WRITE.replace("{admitted}", admitted), {**writes.params, **admitted_params}
    else:
        sql, params = _WRITE.replace("{admitted}", _ALL_CHOSEN), writes.params
    if committing:
        with prepared_cursor() as cursor, prepared_cursor() as commit:
            with statements_connection().pipeline():
                cursor.execute(sql, params)
                commit.execute("COMMIT")
            attempt_ids = dict(cursor.fetchall())
    else:
        with prepared_cursor() as cursor:
            attempt_ids = dict(cursor.execute(sql, params).fetchall())
    return writes.claims(attempt_ids) if attempt_ids else []


def _admitted_query(partitions, *, session_id, operations):
    """The candidate the locking candidates' statement kept (claim_locking_candidates.sql), if its requester and
    project are within their running limits, its requester within its fair share, and the session has a free
    slot for its operation (its unexpired running attempts of it fewer than its processor's slots)."""
    session_running = (
        holding_slots(session_id)
        .filter(operation=OuterRef("operation"))
        .values("operation")
        .annotate(n=Count("*"))
        .values("n")
    )
    slots = WorkerProcessor.objects.filter(session_id=session_id, operation=OuterRef("operation")).values("slots")
    return (
        ProcessingJob.objects.filter(id__in=kept_candidates())
        .within_running_limits(partitions)
        .within_fair_share(operations)
        .annotate(session_running=Coalesce(Subquery(session_running), 0), slots=Subquery(slots))
        .filter(session_running__lt=F("slots"))
        .values("id")
    )


def kept_candidates() -> RawSQL:
    """The ids of the candidates the locking candidates' statement kept for the rest of its transaction."""
    return RawSQL(_KEPT_CANDIDATES, ())  # noqa: S611 (a constant statement)


# Unset when the candidates' statement found none (it sets it only for a row it returns); '' once a transaction
# that set it has ended.
_KEPT_CANDIDATES = "SELECT unnest(nullif(current_setting('quire.claim_candidates', true), '')::uuid[])"
_SQL = Path(__file__).with_name("sql")
_WRITE = (_SQL / "claim_write.sql").read_text()
_WRITE_LONE = (_SQL / "claim_write_lone.sql").read_text()
_ADMITTED = PreparedQuery(_admitted_query)
_ALL_CHOSEN = "SELECT unnest(%(job_ids)s::uuid[]) AS id"


@dataclass(frozen=True)
class _Writes:
    """The attempts, their tickets and the jobs' queued → running moves: claim_write.sql's parameters."""

    chosen: list[Candidate]
    claim_ids: list[uuid.UUID]
    tickets: list["_Ticket"]
    lease_expires_at: datetime
    ticket_expires_at: datetime
    params: dict

    @classmethod
    def of(cls, session_id, chosen: list[Candidate], limit) -> "_Writes":
        now = chosen[0].now
        claim_ids = [uuid.uuid4() for _ in chosen]
        tickets = [
            ticket
            for candidate, claim_id in zip(chosen, claim_ids, strict=True)
            for ticket in _tickets(candidate, claim_id)
        ]
        lease_expires_at = now + timedelta(seconds=limit.lease_seconds)
        ticket_expires_at = now + timedelta(seconds=limit.transfer_ticket_seconds)
        params = {
            "session_id": session_id,
            "now": now,
            "lease_expires_at": lease_expires_at,
            "ticket_expires_at": ticket_expires_at,
            "job_ids": [candidate.id for candidate in chosen],
            "numbers": [candidate.attempt_count + 1 for candidate in chosen],
            "operations": [candidate.operation for candidate in chosen],
            "claim_ids": claim_ids,
            "contracts": [candidate.processor_contract for candidate in chosen],
            **{f"ticket_{column}": [getattr(ticket, field) for ticket in tickets] for column, field in _TICKET_COLUMNS},
        }
        return cls(chosen, claim_ids, tickets, lease_expires_at, ticket_expires_at, params)

    def claims(self, attempt_ids: dict[uuid.UUID, int]) -> list[Claim]:
        return [
            _claim(
                candidate,
                attempt_ids[claim_id],
                claim_id,
                self.lease_expires_at,
                [ticket for ticket in self.tickets if ticket.claim_id == claim_id],
                self.ticket_expires_at,
            )
            for candidate, claim_id in zip(self.chosen, self.claim_ids, strict=True)
        ]


@dataclass(frozen=True)
class _Ticket:
    id: uuid.UUID
    claim_id: uuid.UUID
    secret: str
    secret_sha256: str
    kind: str
    role: str
    max_bytes: int
    expected_sha256: str = ""
    expected_size: int | None = None
    blob_id: int | None = None


# claim_write.sql's ticket arrays: ticket_<column> holds each ticket's <field>.
_TICKET_COLUMNS = (
    ("ids", "id"), ("claim_ids", "claim_id"), ("secret_sha256s", "secret_sha256"), ("kinds", "kind"),
    ("roles", "role"), ("max_bytes", "max_bytes"), ("expected_sha256s", "expected_sha256"),
    ("expected_sizes", "expected_size"), ("blob_ids", "blob_id"),
)  # fmt: skip


def _tickets(candidate: Candidate, claim_id: uuid.UUID) -> list[_Ticket]:
    """The claim's download ticket for its input, then an upload ticket per result role of its operation."""
    return [
        _download_ticket(candidate, claim_id, uuid.uuid4(), *ticket_secret_new()),
        *_uploads(candidate.operation, claim_id),
    ]


def _download_ticket(candidate: Candidate, claim_id, ticket_id, secret, secret_sha256) -> _Ticket:
    return _Ticket(
        ticket_id,
        claim_id,
        secret,
        secret_sha256,
        TransferKind.DOWNLOAD_INPUT,
        role="",
        max_bytes=candidate.input_size,
        expected_sha256=candidate.input_digest,
        expected_size=candidate.input_size,
        blob_id=candidate.input_blob_id,
    )


def _uploads(operation: str, claim_id: uuid.UUID) -> list[_Ticket]:
    return [
        _Ticket(uuid.uuid4(), claim_id, *ticket_secret_new(), TransferKind.UPLOAD_OUTPUT, role.role, role.max_bytes)
        for role in operation_get(operation).result_roles
    ]


@dataclass(frozen=True)
class LoneWrite:
    """claim_write_lone.sql with its admission check and parameters, made before the candidate is known: the
    claim's id, its download ticket's id and secret, and upload tickets for every operation offered."""

    claim_id: uuid.UUID
    download: tuple[uuid.UUID, str, str]  # id, secret, secret's SHA-256
    uploads: dict[str, list[_Ticket]]  # operation → its upload tickets
    sql: str
    params: dict

    @classmethod
    def of(cls, session_id, operations: list[str], limit) -> "LoneWrite":
        admitted, admitted_params = _ADMITTED.named(
            "admitted", literals=(partitions_of(operations),), session_id=session_id, operations=operations
        )
        claim_id = uuid.uuid4()
        download = (uuid.uuid4(), *ticket_secret_new())
        uploads = {operation: _uploads(operation, claim_id) for operation in operations}
        listed = [(operation, ticket) for operation, tickets in uploads.items() for ticket in tickets]
        params = {
            "session_id": session_id,
            "claim_id": claim_id,
            "lease_seconds": limit.lease_seconds,
            "ticket_seconds": limit.transfer_ticket_seconds,
            "download_id": download[0],
            "download_secret_sha256": download[2],
            "upload_ids": [ticket.id for _, ticket in listed],
            "upload_operations": [operation for operation, _ in listed],
            "upload_secret_sha256s": [ticket.secret_sha256 for _, ticket in listed],
            "upload_roles": [ticket.role for _, ticket in listed],
            "upload_max_bytes": [ticket.max_bytes for _, ticket in listed],
            **admitted_params,
        }
        return cls(claim_id, download, uploads, _WRITE_LONE.replace("{admitted}", admitted), params)

    def claims(self, candidate: Candidate, attempt_id: int, lease_expires_at, ticket_expires_at) -> list[Claim]:
        download = _download_ticket(candidate, self.claim_id, *self.download)
        tickets = [download, *self.uploads[candidate.operation]]
        return [_claim(candidate, attempt_id, self.claim_id, lease_expires_at, tickets, ticket_expires_at)]


def _claim(candidate: Candidate, attempt_id, claim_id, lease_expires_at, tickets, expires_at) -> Claim:
    def issued(ticket: _Ticket) -> IssuedTicket:
        return IssuedTicket(ticket.id, ticket.secret, expires_at, ticket.max_bytes)

    download, *uploads = tickets
    return Claim(
        job_id=candidate.id,
        attempt_id=attempt_id,
        attempt_number=candidate.attempt_count + 1,
        claim_id=claim_id,
        operation=candidate.operation,
        processor_contract=candidate.processor_contract,
        lease_expires_at=lease_expires_at,
        input_blob_id=candidate.input_blob_id,
        input_digest=candidate.input_digest,
        options=candidate.options,
        input_profile=candidate.input_profile,
        input_filename=candidate.input_filename,
        project_id=candidate.project_id,
        input_size=candidate.input_size,
        download=issued(download),
        uploads={ticket.role: issued(ticket) for ticket in uploads},
    )
