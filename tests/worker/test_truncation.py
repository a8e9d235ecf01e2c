"""Bounded text keeps the head and the tail and says how much it cut."""

import re

from quire_worker.truncation import HeadTailBuffer, bounded_text

MARKER = re.compile(r"\n\[\.\.\. (\d+) bytes cut \.\.\.\]\n")


def test_text_within_the_limit_is_unchanged():
    assert bounded_text("short log", 100) == "short log"


def test_long_text_keeps_head_and_tail_within_the_limit_and_counts_the_cut():
    text = "HEAD" + "x" * 10_000 + "TAIL"

    bounded = bounded_text(text, 200)

    head, cut, tail = MARKER.split(bounded)
    assert len(bounded.encode()) <= 200
    assert head.startswith("HEAD")
    assert tail.endswith("TAIL")
    assert len(head) + int(cut) + len(tail) == len(text)


def test_a_character_split_by_the_cut_is_dropped_not_garbled():
    head, _, tail = MARKER.split(bounded_text("ü" * 1000, 101))

    assert set(head + tail) == {"ü"}


def test_a_stream_appended_in_chunks_keeps_its_first_and_last_bytes():
    buffer = HeadTailBuffer(64)
    for number in range(1000):
        buffer.append(f"<{number}>".encode())

    value = buffer.value()

    assert len(value) <= 64
    assert value.startswith(b"<0><1><2>")
    assert value.endswith(b"<998><999>")
    assert buffer.total_bytes == sum(len(f"<{number}>") for number in range(1000))
