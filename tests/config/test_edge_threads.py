"""The worker edge's threads: as many as the calls ever in progress at once, and each call's answer or error."""

import asyncio
import contextvars
import threading

import pytest

from config.http.edge_threads import EdgeThreads

request_name = contextvars.ContextVar("request_name", default="none")


def test_calls_one_after_another_reuse_one_thread():
    threads = EdgeThreads(limit=8)

    async def one_after_another():
        return [await threads.run(threading.current_thread) for _ in range(50)]

    served_by = asyncio.run(one_after_another())

    assert len(set(served_by)) == 1 and threads.started == 1


def test_a_steady_stream_of_overlapping_calls_starts_no_more_threads_than_calls_in_progress():
    """Four callers, each sending its next call as soon as its last is answered (as agents' slots do): a pool
    that miscounts its idle threads keeps starting new ones under this pattern."""
    threads = EdgeThreads(limit=512)

    async def caller():
        for _ in range(300):
            await threads.run(sum, [1, 2])

    async def four_callers():
        await asyncio.gather(*(caller() for _ in range(4)))

    asyncio.run(four_callers())

    assert threads.started <= 4


def test_calls_at_once_run_on_threads_of_their_own_up_to_the_limit():
    threads = EdgeThreads(limit=2)
    both_running = threading.Barrier(2, timeout=5)
    release = threading.Event()

    def wait_for_release():
        both_running.wait()
        release.wait(5)
        return threading.current_thread()

    async def three_at_once():
        calls = [threads.run(wait_for_release) for _ in range(2)]
        third = threads.run(threading.current_thread)  # queued: both threads are busy and the limit is reached
        await asyncio.sleep(0.05)
        assert not third.done()
        release.set()
        return await asyncio.gather(*calls), await third

    (first, second), third = asyncio.run(three_at_once())

    assert first is not second and third in (first, second) and threads.started == 2


def test_an_error_reaches_the_caller_and_the_thread_serves_the_next_call():
    threads = EdgeThreads(limit=1)

    def refuse():
        raise ValueError("refused")

    async def failing_then_fine():
        with pytest.raises(ValueError, match="refused"):
            await threads.run(refuse)
        return await threads.run(lambda: "fine")

    assert asyncio.run(failing_then_fine()) == "fine"


def test_a_call_runs_in_its_callers_context():
    threads = EdgeThreads(limit=2)

    async def in_context(name):
        request_name.set(name)
        return await threads.run(request_name.get)

    async def two_requests():
        return await asyncio.gather(asyncio.create_task(in_context("a")), asyncio.create_task(in_context("b")))

    assert asyncio.run(two_requests()) == ["a", "b"]


def test_an_answer_nobody_awaits_any_more_is_dropped_quietly():
    threads = EdgeThreads(limit=1)
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(5)
        return "late"

    async def caller_gives_up():
        call = asyncio.ensure_future(threads.run(slow))
        await asyncio.to_thread(started.wait, 5)
        call.cancel()
        release.set()
        await asyncio.sleep(0.05)  # the answer arrives for a cancelled future
        return await threads.run(lambda: "next")

    assert asyncio.run(caller_gives_up()) == "next"
