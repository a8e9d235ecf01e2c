"""Bounded text: keep the head and the tail of something too long, and say how much was cut."""


class HeadTailBuffer:
    """Accumulates a byte stream, keeping the first and the last ``limit // 2`` bytes.

    Memory stays bounded however much is appended; ``value()`` joins head and tail with a
    marker line naming how many bytes were cut.
    """

    def __init__(self, limit: int):
        self._limit = limit
        self._half = max(limit // 2, 1)
        self._head = bytearray()
        self._tail = bytearray()
        self.total_bytes = 0

    def append(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        room = self._half - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            excess = len(self._tail) - self._half
            if excess > 0:
                del self._tail[:excess]

    @property
    def cut_bytes(self) -> int:
        return self.total_bytes - len(self._head) - len(self._tail)

    def value(self) -> bytes:
        """Everything appended, or, when it did not fit, at most ``limit`` bytes: head, marker, tail."""
        if not self.cut_bytes:
            return bytes(self._head + self._tail)
        room = max(self._limit - len(cut_marker(self.total_bytes)), 0)
        head = self._head[: room // 2]
        tail = self._tail[len(self._tail) - (room - room // 2) :]
        cut = self.total_bytes - len(head) - len(tail)
        return bytes(head) + cut_marker(cut).encode() + bytes(tail)


def cut_marker(cut_bytes: int) -> str:
    return f"\n[... {cut_bytes} bytes cut ...]\n"


def bounded_text(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` UTF-8 bytes, else its head and tail around a cut marker."""
    buffer = HeadTailBuffer(limit)
    buffer.append(text.encode())
    # "ignore" drops a character split by the cut instead of growing the text with replacements.
    return buffer.value().decode(errors="ignore")
