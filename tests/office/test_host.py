"""The conversion host's scheduling, driven through a fake engine whose completions the test controls."""

import asyncio

import pytest

from office.exceptions import (
    BackgroundDisabled,
    ConversionFailed,
    OfficeBusy,
    SourceChanged,
    SourceTooLarge,
    SpeculationEvicted,
)
from office.host import Priority
from tests.office.fakes import Harness, run, until

FG, BG = Priority.FOREGROUND, Priority.BACKGROUND


def test_a_source_too_large_for_admission_is_refused_before_any_byte_is_read():
    async def scenario():
        h = Harness(max_input_bytes=10, max_source_bytes=100)
        big = h.workspace.put("big.docx", b"x" * 11)
        with pytest.raises(SourceTooLarge):
            await h.convert("big.docx")
        assert big.reads == 0
        assert h.host.readers == 0

    run(scenario())


def test_a_queued_job_reads_its_source_only_when_it_is_dispatched():
    async def scenario():
        h = Harness(max_running=1)
        h.workspace.put("a.docx", b"A")
        b = h.workspace.put("b.docx", b"B")
        first = h.start("a.docx")
        conversion = await h.engine.call(1)
        second = h.start("b.docx")
        await until(lambda: h.host.readers == 2)
        assert b.reads == 0 and h.host.queued(FG) == 1
        conversion.finish()
        await first
        (await h.engine.call(2)).finish()
        assert (await second).pdf == b"%PDF-fake"
        assert b.reads == 1

    run(scenario())


def test_reader_and_queue_limits_refuse_before_reading():
    async def scenario():
        h = Harness(max_running=1, max_queued=1, max_readers=2)
        for name in ("a", "b", "c"):
            h.workspace.put(f"{name}.docx", name.encode())
        running = h.start("a.docx")
        await h.engine.call(1)
        queued = h.start("b.docx", BG)
        await until(lambda: h.host.readers == 2)
        with pytest.raises(OfficeBusy):
            await h.convert("c.docx", BG)
        assert h.workspace.files["c.docx"].reads == 0
        for task in (running, queued):
            task.cancel()
        await asyncio.gather(running, queued, return_exceptions=True)

    run(scenario())


def test_two_paths_with_identical_bytes_share_one_conversion():
    async def scenario():
        h = Harness(max_running=2)
        h.workspace.put("a.docx", b"same bytes")
        h.workspace.put("copy/of-a.docx", b"same bytes")
        first, second = h.start("a.docx"), h.start("copy/of-a.docx")
        conversion = await h.engine.call(1)
        await until(lambda: h.host.running == 1)  # the second job hashed, merged and settled
        conversion.finish(b"%PDF-shared")
        results = await asyncio.gather(first, second)
        assert [result.pdf for result in results] == [b"%PDF-shared", b"%PDF-shared"]
        assert results[0].pdf is not results[1].pdf  # each reader holds its own copy
        assert len(h.engine.calls) == 1

    run(scenario())


def test_a_foreground_join_promotes_a_queued_prewarm_ahead_of_later_foreground_work():
    async def scenario():
        h = Harness(max_running=1)
        for name in ("busy", "prewarm", "later"):
            h.workspace.put(f"{name}.docx", name.encode())
        busy = h.start("busy.docx")
        blocking = await h.engine.call(1)
        prewarm = h.start("prewarm.docx", BG)
        later = h.start("later.docx")
        await until(lambda: h.host.readers == 3)
        viewer = h.start("prewarm.docx")
        await until(lambda: h.host.queued(FG) == 2)
        blocking.finish()
        next_up = await h.engine.call(2)
        assert next_up.source == b"prewarm"
        next_up.finish()
        (await h.engine.call(3)).finish()
        await asyncio.gather(busy, prewarm, later, viewer)

    run(scenario())


def test_the_last_foreground_cancel_demotes_the_prewarm_behind_foreground_work():
    async def scenario():
        h = Harness(max_running=1)
        for name in ("busy", "prewarm", "later"):
            h.workspace.put(f"{name}.docx", name.encode())
        busy = h.start("busy.docx")
        blocking = await h.engine.call(1)
        prewarm = h.start("prewarm.docx", BG)
        later = h.start("later.docx")
        viewer = h.start("prewarm.docx")
        await until(lambda: h.host.queued(FG) == 2)
        viewer.cancel()
        await until(lambda: h.host.queued(BG) == 1)
        blocking.finish()
        next_up = await h.engine.call(2)
        assert next_up.source == b"later"
        next_up.finish()
        (await h.engine.call(3)).finish()
        await asyncio.gather(busy, prewarm, later)
        assert viewer.cancelled()

    run(scenario())


def test_demoting_a_blocked_prewarm_admits_eligible_foreground_work_at_once():
    async def scenario():
        h = Harness(max_running=2, max_input_bytes=60, max_source_bytes=100)
        h.workspace.put("big.docx", b"b" * 60)
        h.workspace.put("prewarm.docx", b"p" * 60)
        h.workspace.put("small.docx", b"s" * 10)
        big = h.start("big.docx")
        await h.engine.call(1)
        prewarm, viewer = h.start("prewarm.docx", BG), h.start("prewarm.docx")
        small = h.start("small.docx")
        await until(lambda: h.host.readers == 4)
        assert h.host.queued(FG) == 2  # the promoted prewarm does not fit and holds the line
        viewer.cancel()
        small_conversion = await h.engine.call(2)
        assert small_conversion.source == b"s" * 10
        for task in (big, prewarm, small):
            task.cancel()
        await asyncio.gather(big, prewarm, small, return_exceptions=True)

    run(scenario())


def test_removing_a_queued_foreground_blocker_admits_the_background_work_behind_it_at_once():
    async def scenario():
        h = Harness(max_running=3, max_input_bytes=60, max_source_bytes=100)
        h.workspace.put("big.docx", b"b" * 60)
        h.workspace.put("blocker.docx", b"x" * 60)
        h.workspace.put("prewarm.docx", b"p" * 10)
        big = h.start("big.docx")
        running = await h.engine.call(1)
        blocker = h.start("blocker.docx")  # does not fit beside big: it waits, and holds the line
        prewarm = h.start("prewarm.docx", BG)
        await until(lambda: h.host.queued(FG) == 1 and h.host.queued(BG) == 1)
        assert h.host.running == 1, "the prewarm would fit, but waits behind the person's file"

        blocker.cancel()

        admitted = await h.engine.call(2)
        assert admitted.source == b"p" * 10
        admitted.finish()
        running.finish()
        await asyncio.gather(big, prewarm)
        await asyncio.gather(blocker, return_exceptions=True)

    run(scenario())


def test_a_full_queue_evicts_queued_speculation_for_foreground_work():
    async def scenario():
        h = Harness(max_running=1, max_queued=1)
        for name in ("busy", "prewarm", "wanted", "another"):
            h.workspace.put(f"{name}.docx", name.encode())
        busy = h.start("busy.docx")
        blocking = await h.engine.call(1)
        prewarm = h.start("prewarm.docx", BG)
        await until(lambda: h.host.queued(BG) == 1)
        wanted = h.start("wanted.docx")
        with pytest.raises(SpeculationEvicted):
            await prewarm
        with pytest.raises(OfficeBusy):
            await h.convert("another.docx", BG)
        blocking.finish()
        (await h.engine.call(2)).finish()
        await asyncio.gather(busy, wanted)
        assert h.workspace.files["prewarm.docx"].reads == 0

    run(scenario())


def test_a_full_queue_evicts_the_newest_speculation_and_keeps_the_older():
    async def scenario():
        h = Harness(max_running=1, max_queued=2)
        for name in ("busy", "older", "newer", "wanted"):
            h.workspace.put(f"{name}.docx", name.encode())
        busy = h.start("busy.docx")
        blocking = await h.engine.call(1)
        older = h.start("older.docx", BG)
        await until(lambda: h.host.queued(BG) == 1)
        newer = h.start("newer.docx", BG)
        await until(lambda: h.host.queued(BG) == 2)
        wanted = h.start("wanted.docx")
        with pytest.raises(SpeculationEvicted):
            await newer
        assert not older.done()
        blocking.finish()
        first = await h.engine.call(2)
        assert first.source == b"wanted", "the person's file goes ahead of the speculation that stayed"
        first.finish()
        (await h.engine.call(3)).finish()
        await asyncio.gather(busy, wanted, older)
        assert h.workspace.files["newer.docx"].reads == 0

    run(scenario())


def test_disabling_background_rejects_speculative_readers_but_serves_cache_hits():
    async def scenario():
        h = Harness(max_running=1)
        for name in ("ready", "busy", "queued"):
            h.workspace.put(f"{name}.docx", name.encode())
        ready = h.start("ready.docx")
        (await h.engine.call(1)).finish(b"%PDF-ready")
        await ready
        busy = h.start("busy.docx")
        await h.engine.call(2)
        queued = h.start("queued.docx")
        await until(lambda: h.host.queued(FG) == 1)
        h.host.background_enabled = False
        hit = await h.convert("ready.docx", BG)
        assert hit.cache_hit and hit.pdf == b"%PDF-ready"
        for path in ("busy.docx", "queued.docx"):  # neither running nor queued work takes a new prewarm
            with pytest.raises(BackgroundDisabled):
                await h.convert(path, BG)
        assert h.host.readers == 2
        for task in (busy, queued):
            task.cancel()
        await asyncio.gather(busy, queued, return_exceptions=True)

    run(scenario())


def test_a_reader_that_joins_after_hashing_can_cancel_alone():
    async def scenario():
        h = Harness(max_running=1)
        h.workspace.put("a.docx", b"A")
        first = h.start("a.docx")
        conversion = await h.engine.call(1)
        joined = h.start("a.docx")  # the digest is known now: this reader joins the running conversion
        await until(lambda: h.host.readers == 2)
        joined.cancel()
        await until(lambda: h.host.readers == 1)
        assert not conversion.cancelled.is_set()
        conversion.finish()
        assert (await first).pdf == b"%PDF-fake"
        assert h.workspace.files["a.docx"].reads == 1

    run(scenario())


def test_the_first_reader_leaving_keeps_the_conversion_for_the_others():
    async def scenario():
        h = Harness(max_running=1)
        h.workspace.put("a.docx", b"A")
        first = h.start("a.docx")
        conversion = await h.engine.call(1)
        second = h.start("a.docx", BG)
        await until(lambda: h.host.readers == 2)
        first.cancel()
        await until(lambda: h.host.readers == 1)
        assert not conversion.cancelled.is_set()
        conversion.finish()
        assert (await second).pdf == b"%PDF-fake"

    run(scenario())


def test_the_last_reader_leaving_stops_the_conversion():
    async def scenario():
        h = Harness(max_running=1)
        h.workspace.put("a.docx", b"A")
        only = h.start("a.docx")
        conversion = await h.engine.call(1)
        only.cancel()
        await conversion.cancelled.wait()
        await until(lambda: h.host.running == 0)
        assert h.host.stats.outcomes["cancelled"] == 1

    run(scenario())


def test_capacity_returns_only_after_a_cancelled_conversion_has_cleaned_up():
    async def scenario():
        h = Harness(max_running=1, hold_cleanup=True)
        h.workspace.put("a.docx", b"A")
        waiting = h.workspace.put("b.docx", b"B")
        first = h.start("a.docx")
        conversion = await h.engine.call(1)
        second = h.start("b.docx")
        await until(lambda: h.host.readers == 2)
        first.cancel()
        await conversion.cancelled.wait()
        assert (h.host.running, h.host.queued(FG), waiting.reads) == (1, 1, 0)
        conversion.cleanup_done.set()
        (await h.engine.call(2)).finish()
        await second
        assert h.host.running == 0 and h.host.reserved_bytes == 0

    run(scenario())


def test_capacity_returns_only_after_a_cancelled_read_has_ended():
    async def scenario():
        h = Harness(max_running=1, max_input_bytes=64, max_source_bytes=64)
        slow = h.workspace.put("slow.docx", b"S")
        slow.gate, slow.read_cleanup = asyncio.Event(), asyncio.Event()
        h.workspace.put("next.docx", b"N")
        reader = h.start("slow.docx", size_known=False)  # an unknown size reserves the input cap
        await slow.read_started.wait()
        assert h.host.reserved_bytes == 64
        following = h.start("next.docx")
        await until(lambda: h.host.readers == 2)
        reader.cancel()
        await slow.read_cancelled.wait()
        assert (h.host.running, h.host.reserved_bytes) == (1, 64)
        slow.read_cleanup.set()
        (await h.engine.call(1)).finish()
        await following
        assert h.host.reserved_bytes == 0

    run(scenario())


def test_background_work_leaves_a_permit_for_people_even_after_promotion():
    async def scenario():
        h = Harness(max_running=2)
        for name in ("p1", "p2", "person"):
            h.workspace.put(f"{name}.docx", name.encode())
        p1 = h.start("p1.docx", BG)
        await h.engine.call(1)
        p2 = h.start("p2.docx", BG)
        await until(lambda: h.host.queued(BG) == 1)
        promoter = h.start("p1.docx")  # joining the running prewarm must not free a speculative permit
        await until(lambda: h.host.readers == 3)
        assert h.host.running == 1
        person = h.start("person.docx")
        assert (await h.engine.call(2)).source == b"person"
        for task in (p1, p2, promoter, person):
            task.cancel()
        await asyncio.gather(p1, p2, promoter, person, return_exceptions=True)

    run(scenario())


def test_a_source_changed_since_admission_fails_without_publishing_an_alias():
    async def scenario():
        h = Harness()
        file = h.workspace.put("a.docx", b"old")
        admitted = h.workspace.source("a.docx")
        file.data, file.version = b"new", "version-of-new"
        reading = h.host.convert(source=admitted, read=h.workspace.reader("a.docx"), priority=FG)
        with pytest.raises(SourceChanged):
            await reading
        assert h.host.index.get(admitted.key) is None
        assert len(h.host.cache) == 0 and h.engine.calls == []

    run(scenario())


def test_replacing_the_converter_invalidates_reuse_through_the_generation():
    async def scenario():
        h = Harness()
        h.workspace.put("a.docx", b"A")
        first = h.start("a.docx")
        (await h.engine.call(1)).finish(b"%PDF-gen1")
        assert (await first).generation == 1
        assert (await h.convert("a.docx")).cache_hit
        assert h.workspace.files["a.docx"].reads == 1  # the version index spared a second read
        h.engine.generation = 2  # a new converter lifetime
        again = h.start("a.docx")
        (await h.engine.call(2)).finish(b"%PDF-gen2")
        result = await again
        assert (result.pdf, result.generation, result.cache_hit) == (b"%PDF-gen2", 2, False)

    run(scenario())


def test_a_failed_conversion_reaches_every_reader_and_is_retried_on_a_later_request():
    async def scenario():
        h = Harness()
        h.workspace.put("a.docx", b"A")
        readers = [h.start("a.docx"), h.start("a.docx", BG)]
        (await h.engine.call(1)).fail(ConversionFailed())
        outcomes = await asyncio.gather(*readers, return_exceptions=True)
        assert all(isinstance(outcome, ConversionFailed) for outcome in outcomes)
        assert outcomes[0] is not outcomes[1]
        retry = h.start("a.docx")
        (await h.engine.call(2)).finish()
        assert not (await retry).cache_hit
        assert h.host.stats.outcomes["conversion_failed"] == 1

    run(scenario())


def test_a_pdf_too_large_for_the_cache_is_returned_without_being_retained():
    async def scenario():
        h = Harness(cache_entry_bytes=8)
        h.workspace.put("a.docx", b"A")
        first = h.start("a.docx")
        (await h.engine.call(1)).finish(b"%PDF-" + b"x" * 10)
        assert len((await first).pdf) == 15
        assert len(h.host.cache) == 0
        again = h.start("a.docx")
        (await h.engine.call(2)).finish()
        await again

    run(scenario())
