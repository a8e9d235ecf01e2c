"""A socket's message rate: a token bucket (a sustained rate, and a burst for pastes and reconnects)."""

import time


class TokenBucket:
    def __init__(self, *, per_second: float, burst: int):
        self._rate, self._capacity = per_second, float(burst)
        self._tokens, self._at = float(burst), time.monotonic()

    def take(self) -> bool:
        """Spend one token; ``False`` when the bucket is empty (the message is over the rate)."""
        now = time.monotonic()
        self._tokens = min(self._capacity, self._tokens + (now - self._at) * self._rate)
        self._at = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True
