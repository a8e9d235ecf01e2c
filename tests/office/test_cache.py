"""The host's bounded memories: the source-version index and the LRU of ready PDFs."""

import uuid

from office.cache import PdfCache, SourceIndex

PROJECT = uuid.UUID(int=7)


def identity(name: str) -> tuple[str, str, int]:
    return (name, ".docx", 1)


def test_the_pdf_cache_evicts_the_least_recently_used_entry_past_its_entry_limit():
    cache = PdfCache(max_entries=2, max_bytes=1000, max_entry_bytes=1000)
    cache.put(identity("a"), b"A", 1)
    cache.put(identity("b"), b"B", 1)
    cache.get(identity("a"))
    cache.put(identity("c"), b"C", 1)
    assert [cache.get(identity(name)) is not None for name in "abc"] == [True, False, True]
    assert len(cache) == 2


def test_the_pdf_cache_evicts_until_its_bytes_fit():
    cache = PdfCache(max_entries=10, max_bytes=10, max_entry_bytes=10)
    cache.put(identity("a"), b"a" * 4, 1)
    cache.put(identity("b"), b"b" * 4, 1)
    cache.put(identity("c"), b"c" * 4, 1)
    assert cache.get(identity("a")) is None
    assert cache.bytes == 8 and len(cache) == 2


def test_the_pdf_cache_does_not_retain_a_pdf_over_its_entry_limit():
    cache = PdfCache(max_entries=10, max_bytes=100, max_entry_bytes=5)
    assert cache.put(identity("a"), b"123456", 1) is False
    assert cache.get(identity("a")) is None and cache.bytes == 0


def test_the_pdf_cache_hands_each_caller_a_copy_of_its_private_buffer():
    cache = PdfCache(max_entries=10, max_bytes=100, max_entry_bytes=100)
    original = bytearray(b"%PDF-1")
    cache.put(identity("a"), bytes(original), 3)
    first, second = cache.get(identity("a")), cache.get(identity("a"))
    assert first.pdf == second.pdf == b"%PDF-1" and first.page_count == 3
    assert first.pdf is not second.pdf


def test_replacing_an_entry_keeps_the_byte_count_exact():
    cache = PdfCache(max_entries=10, max_bytes=100, max_entry_bytes=100)
    cache.put(identity("a"), b"1234", 1)
    cache.put(identity("a"), b"12", 1)
    assert cache.bytes == 2 and len(cache) == 1


def test_the_source_index_forgets_the_least_recently_used_version_past_its_limit():
    index = SourceIndex(max_entries=2)
    index.put((PROJECT, "a.docx", "v1"), "d1")
    index.put((PROJECT, "b.docx", "v1"), "d2")
    index.get((PROJECT, "a.docx", "v1"))
    index.put((PROJECT, "c.docx", "v1"), "d3")
    assert index.get((PROJECT, "b.docx", "v1")) is None
    assert index.get((PROJECT, "a.docx", "v1")) == "d1" and len(index) == 2
