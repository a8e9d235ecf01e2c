"""Advisory lock keys: a namespace and a value, hashed to the 64-bit key PostgreSQL's advisory locks take."""

import hashlib


def advisory_key(namespace: str, value) -> int:
    digest = hashlib.sha256(f"{namespace}:{value}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
