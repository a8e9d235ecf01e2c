"""Issuing transfer tickets: the ticket row stores only the secret's SHA-256.

The secret travels in the claim response, and a worker request's replay record
keeps that response byte for byte until the record expires (so a retried
acquire gets the same ticket); tickets outlive neither their claim nor their TTL.
"""

import hashlib
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class IssuedTicket:
    ticket_id: uuid.UUID
    secret: str
    expires_at: datetime
    max_bytes: int


def ticket_secret_new() -> tuple[str, str]:
    """A new ticket secret and the SHA-256 that is all the ticket row keeps of it."""
    secret = secrets.token_urlsafe(32)
    return secret, hashlib.sha256(secret.encode()).hexdigest()
