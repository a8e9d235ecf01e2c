"""Transfer tickets: single-purpose, expiring, bound to one claim (and role), size- and digest-checked.

The secret is returned once and travels in the ``X-Quire-Transfer-Secret``
header, never the URL; only its SHA-256 is stored.
"""

import hashlib
import hmac
import uuid
from datetime import datetime

from django.db import transaction

from processing.blobs import blob_read
from processing.claims import TRANSACTION_NOW
from processing.exceptions import OutputRejected, TicketInvalid
from processing.leases import attempt_current
from processing.models import ProcessingAttempt, TransferKind, TransferTicket
from processing.staging import output_stage, role_limit
from processing.transfers import IssuedTicket, ticket_issue


def _issue(attempt: ProcessingAttempt, now: datetime, **fields) -> IssuedTicket:
    return ticket_issue(attempt_id=attempt.pk, now=now, **fields)


def upload_ticket_issue(
    *, claim_id: uuid.UUID, role: str, media_type: str, filename: str, size: int, sha256: str
) -> IssuedTicket:
    with transaction.atomic():
        attempt, now = attempt_current(claim_id)
        max_bytes = role_limit(operation=attempt.operation, role=role, media_type=media_type)
        if not 0 <= size <= max_bytes:
            raise OutputRejected("The declared size exceeds the role's limit.", details={"limit_bytes": max_bytes})
        return _issue(
            attempt, now, kind=TransferKind.UPLOAD_OUTPUT, role=role, media_type=media_type, filename=filename[:255],
            max_bytes=max_bytes, expected_sha256=sha256.lower(), expected_size=size,
        )  # fmt: skip


def _redeemable(ticket_id: uuid.UUID, secret: str, kind: str) -> TransferTicket:
    unexpired = TransferTicket.objects.filter(pk=ticket_id, kind=kind, expires_at__gt=TRANSACTION_NOW)
    ticket = unexpired.select_related("attempt").first()
    digest = hashlib.sha256((secret or "").encode()).hexdigest()
    if ticket is None or not hmac.compare_digest(ticket.secret_sha256, digest):
        raise TicketInvalid()
    return ticket


def download_redeem(*, ticket_id: uuid.UUID, secret: str) -> tuple[bytes, str]:
    """The input bytes and their digest, while the ticket's claim is still current."""
    ticket = _redeemable(ticket_id, secret, TransferKind.DOWNLOAD_INPUT)
    attempt_current(ticket.attempt.claim_id)
    return blob_read(ticket.blob_id), ticket.expected_sha256


def upload_redeem(*, ticket_id: uuid.UUID, secret: str, data: bytes) -> dict:
    """Stage the uploaded bytes for the ticket's role. The same bytes again are accepted again."""
    ticket = _redeemable(ticket_id, secret, TransferKind.UPLOAD_OUTPUT)
    if len(data) != ticket.expected_size or len(data) > ticket.max_bytes:
        raise OutputRejected(
            "The body's size differs from the declared size.", details={"declared": ticket.expected_size}
        )
    staged = output_stage(
        claim_id=ticket.attempt.claim_id, role=ticket.role, media_type=ticket.media_type,
        filename=ticket.filename, data=data, expected_sha256=ticket.expected_sha256,
    )  # fmt: skip
    return {"role": staged.role, "size": staged.size_bytes, "sha256": staged.sha256}
