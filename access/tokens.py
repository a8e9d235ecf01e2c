"""Personal API token format: ``quire_<prefix>_<secret>``; stored as the SHA-256 of the whole string."""

import hashlib
import secrets

TOKEN_PREFIX = "quire_"  # noqa: S105  a public marker, not a secret


def token_generate() -> tuple[str, str, str]:
    """A new token as ``(plaintext, prefix, sha256)``."""
    prefix = secrets.token_hex(6)
    plaintext = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    return plaintext, prefix, token_digest(plaintext)


def token_digest(plaintext: str) -> str:
    return hashlib.sha256(plaintext.encode("utf-8", "surrogateescape")).hexdigest()
