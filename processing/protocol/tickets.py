"""Transfer tickets: single-purpose, expiring, bound to one claim (and role) and to the worker identity whose
session holds it, size- and digest-checked.

The secret is returned once and travels in the ``X-Quire-Transfer-Secret``
header, never the URL; only its SHA-256 is stored.
"""

import hashlib
import hmac
import json
import uuid
from dataclasses import dataclass

import quire_wire
from foundation.database.prepared import prepared_cursor
from processing.exceptions import ClaimLost, OutputRejected, TicketInvalid
from processing.kernel.configuration import limits
from processing.kernel.transfers import IssuedTicket, ticket_secret_new
from processing.protocol.sessions import claim_holder
from processing.queue.leases import CLAIM_CURRENT_SQL
from processing.queue.staging import (
    CURRENT_ACCEPTING_ATTEMPT_SQL,
    output_stage,
    refusal_explain,
    role_limits_accepting,
    role_limits_all,
    staging_sql,
)

# Issued in one statement, fenced as staging is (the claim current, its operation's role taking the media
# type and size) and to the identity whose session holds the claim; the ticket's limit is that role's.
_UPLOAD_ISSUE_SQL = f"""
    INSERT INTO processing_transferticket
        (id, secret_sha256, kind, attempt_id, role, media_type, filename, max_bytes, expected_sha256,
         expected_size, blob_id, created_at, expires_at)
    SELECT %(ticket)s, %(secret_sha256)s, 'upload_output', attempt.id, %(role)s, %(media_type)s, %(filename)s,
           (%(accepting)s::jsonb ->> attempt.operation)::bigint, %(sha256)s, %(size)s, NULL, now(),
           now() + make_interval(secs => %(seconds)s)
    {CURRENT_ACCEPTING_ATTEMPT_SQL}
      AND EXISTS (SELECT 1 FROM processing_workersession AS session
                  WHERE session.id = attempt.session_id AND session.identity = %(identity)s)
    RETURNING expires_at, max_bytes
"""  # noqa: S608  the fragment is a constant; every value is a parameter


def upload_ticket_issue(
    *, claim_id: uuid.UUID, identity: str, role: str, media_type: str, filename: str, size: int, sha256: str
) -> IssuedTicket:
    """An upload ticket for ``role`` under ``identity``'s claim; one round trip when the request is good, more
    looks explain a refusal: another identity's claim (or none) first, as every claim-scoped call does."""
    ticket_id, (secret, secret_sha256) = uuid.uuid4(), ticket_secret_new()
    accepting = role_limits_accepting(role=role, media_type=media_type, size=size)
    with prepared_cursor() as cursor:
        row = cursor.execute(
            _UPLOAD_ISSUE_SQL,
            {
                "ticket": ticket_id,
                "secret_sha256": secret_sha256,
                "role": role,
                "media_type": media_type,
                "filename": filename[:255],
                "accepting": json.dumps(accepting),
                "sha256": sha256.lower(),
                "size": size,
                "seconds": limits().transfer_ticket_seconds,
                "claim": claim_id,
                "identity": identity,
            },
        ).fetchone()
    if row is None:
        if claim_holder(claim_id=claim_id, identity=identity) is None:
            raise ClaimLost()
        refusal_explain(claim_id=claim_id, role=role, media_type=media_type, size=size)
    expires_at, max_bytes = row
    return IssuedTicket(ticket_id, secret, expires_at, max_bytes)


@dataclass(frozen=True)
class DeclaredUpload:
    """What a PUT on a claim's upload ticket says of its bytes (headers); a requested ticket declared it before.

    A claim carries an upload ticket per result role of its operation (made by the claim, ``processing.queue.claims``),
    so that an agent needs no request per output: the media type, filename and digest come with the bytes."""

    media_type: str = ""
    filename: str = ""
    sha256: str = ""


@dataclass(frozen=True)
class _Redeemable:
    claim_id: uuid.UUID
    role: str
    media_type: str
    filename: str
    max_bytes: int
    expected_sha256: str
    expected_size: int | None


# A ticket redeems only for the identity whose session holds its claim: knowing the secret is not enough.
_HELD_BY_IDENTITY_SQL = """
    JOIN processing_workersession AS session
      ON session.id = attempt.session_id AND session.identity = %(identity)s
"""
# Every transfer looks its ticket up here: plain statements on the ticket's primary key.
_UPLOAD_TICKET_SQL = f"""
    SELECT ticket.secret_sha256, attempt.claim_id, ticket.role, ticket.media_type, ticket.filename,
           ticket.max_bytes, ticket.expected_sha256, ticket.expected_size
    FROM processing_transferticket AS ticket
    JOIN processing_processingattempt AS attempt ON attempt.id = ticket.attempt_id
    {_HELD_BY_IDENTITY_SQL}
    WHERE ticket.id = %(ticket)s AND ticket.kind = 'upload_output' AND ticket.expires_at > now()
"""  # noqa: S608  the fragment is a constant; every value is a parameter
# The input's bytes come along only for the right secret.
_DOWNLOAD_SQL = f"""
    SELECT ticket.secret_sha256, ticket.expected_sha256, {CLAIM_CURRENT_SQL},
           CASE WHEN ticket.secret_sha256 = %(digest)s THEN blob.data END
    FROM processing_transferticket AS ticket
    JOIN processing_processingattempt AS attempt ON attempt.id = ticket.attempt_id
    JOIN processing_processingjob AS job ON job.id = attempt.job_id
    JOIN processing_processingblob AS blob ON blob.id = ticket.blob_id
    {_HELD_BY_IDENTITY_SQL}
    WHERE ticket.id = %(ticket)s AND ticket.kind = 'download_input' AND ticket.expires_at > now()
"""  # noqa: S608  the fragment is a constant; every value is a parameter


def _secret_sha256(secret: str) -> str:
    return hashlib.sha256((secret or "").encode()).hexdigest()


def _upload_redeemable(ticket_id: uuid.UUID, secret: str, identity: str) -> _Redeemable:
    with prepared_cursor() as cursor:
        row = cursor.execute(_UPLOAD_TICKET_SQL, {"ticket": ticket_id, "identity": identity}).fetchone()
    if row is None or not hmac.compare_digest(row[0], _secret_sha256(secret)):
        raise TicketInvalid()
    return _Redeemable(*row[1:])


def download_redeem(*, ticket_id: uuid.UUID, secret: str, identity: str) -> tuple[bytes, str]:
    """The input bytes and their digest, while the ticket's claim is still current and ``identity``'s."""
    digest = _secret_sha256(secret)
    with prepared_cursor() as cursor:
        row = cursor.execute(_DOWNLOAD_SQL, {"ticket": ticket_id, "digest": digest, "identity": identity}).fetchone()
    if row is None or not hmac.compare_digest(row[0], digest):
        raise TicketInvalid()
    _, expected_sha256, claim_current, data = row
    if not claim_current:
        raise ClaimLost()
    return bytes(data), expected_sha256


# A requested ticket was declared when issued (its expected_sha256 is set); a claim's ticket takes the declaration
# that comes with the bytes. Everything upload_redeem checks, in the statement that stages: the ticket by id and
# secret, its claim current, the declared digest and size those of the bytes, the role taking the media type and
# size for the claim's operation (%(role_limits)s, from role_limits_all).
_REDEEM_ATTEMPT_SQL = f"""
    SELECT attempt.id, ticket.role, declared.media_type,
           coalesce(nullif(declared.filename, ''), ticket.role) AS filename
    FROM processing_transferticket AS ticket
    CROSS JOIN LATERAL (
        SELECT CASE WHEN ticket.expected_sha256 <> '' THEN ticket.media_type ELSE %(media_type)s END AS media_type,
               CASE WHEN ticket.expected_sha256 <> '' THEN ticket.filename ELSE %(filename)s END AS filename,
               CASE WHEN ticket.expected_sha256 <> '' THEN ticket.expected_sha256 ELSE %(declared_sha256)s END
                   AS sha256
    ) AS declared
    JOIN processing_processingattempt AS attempt ON attempt.id = ticket.attempt_id
    JOIN processing_processingjob AS job ON job.id = attempt.job_id
    {_HELD_BY_IDENTITY_SQL}
    WHERE ticket.id = %(ticket)s AND ticket.kind = 'upload_output' AND ticket.expires_at > now()
      AND ticket.secret_sha256 = %(secret_sha256)s AND {CLAIM_CURRENT_SQL}
      AND declared.sha256 = %(sha256)s AND coalesce(ticket.expected_size, %(size)s) = %(size)s
      AND %(size)s <= ticket.max_bytes
      AND %(size)s <= (%(role_limits)s::jsonb #>> ARRAY[attempt.operation, ticket.role, declared.media_type])::bigint
"""  # noqa: S608  the fragment is a constant; every value is a parameter
_REDEEM_SQL = staging_sql(_REDEEM_ATTEMPT_SQL)


def upload_redeem(*, ticket_id: uuid.UUID, secret: str, identity: str, data: bytes, declared: DeclaredUpload) -> dict:
    """Stage the uploaded bytes for the ticket's role. The same bytes again are accepted again.

    A requested ticket checks the bytes against what was declared when it was issued (``declared`` is ignored);
    a claim's ticket against ``declared``, which must name the media type and the digest. One statement when all
    is in order; otherwise the checks one by one say what is not.
    """
    digest = hashlib.sha256(data).hexdigest()
    with prepared_cursor() as cursor:
        cursor.execute(
            _REDEEM_SQL,
            {
                "ticket": ticket_id,
                "identity": identity,
                "secret_sha256": _secret_sha256(secret),
                "media_type": declared.media_type,
                "filename": declared.filename[:255],
                "declared_sha256": declared.sha256.lower(),
                "sha256": digest,
                "size": len(data),
                "data": data,
                "role_limits": json.dumps(role_limits_all()),
            },
        )
        staged = cursor.fetchone()
    if staged is not None:
        return {"role": staged[-1], "size": len(data), "sha256": digest}
    return _upload_redeem_explained(ticket_id=ticket_id, secret=secret, identity=identity, data=data, declared=declared)


def _upload_redeem_explained(
    *, ticket_id: uuid.UUID, secret: str, identity: str, data: bytes, declared: DeclaredUpload
) -> dict:
    """``upload_redeem`` check by check, raising the first refusal (or staging, if all is in order by now)."""
    ticket = _upload_redeemable(ticket_id, secret, identity)
    if ticket.expected_sha256:
        declared = DeclaredUpload(ticket.media_type, ticket.filename, ticket.expected_sha256)
        size = ticket.expected_size
    elif not (declared.media_type and declared.sha256):  # a wrong one is refused by staging, as for any ticket
        raise OutputRejected(
            "A claim's upload ticket takes the media type and the sha256 with the bytes.",
            details={"headers": [quire_wire.MEDIA_TYPE_HEADER, quire_wire.SHA256_HEADER]},
        )
    else:
        size = len(data)
    if len(data) != size or len(data) > ticket.max_bytes:
        raise OutputRejected(
            "The body's size differs from the declared size or exceeds the ticket's limit.",
            details={"declared": size, "limit_bytes": ticket.max_bytes},
        )
    staged = output_stage(
        claim_id=ticket.claim_id,
        role=ticket.role,
        media_type=declared.media_type,
        filename=declared.filename or ticket.role,
        data=data,
        expected_sha256=declared.sha256.lower(),
    )
    return {"role": staged.role, "size": staged.size_bytes, "sha256": staged.sha256}
