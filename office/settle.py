"""Awaiting work whose cleanup must finish before its capacity is given back.

Cancelling an asyncio task stops the await, not the work: a thread keeps
reading, an engine keeps killing its process. The host releases reserved bytes
and conversion permits only after the work has actually settled, so both
helpers below, when cancelled, wait for the inner work to end before re-raising.
"""

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor


async def settle[T](work: Awaitable[T]) -> T:
    """Await ``work``; if cancelled, cancel it too and wait until it has finished, then re-raise."""
    inner = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(inner)
    except asyncio.CancelledError:
        inner.cancel()
        await _until_done(inner)
        raise


async def in_thread[T](function: Callable[..., T], *args, executor: Executor | None = None) -> T:
    """Run ``function(*args)`` in a thread; a cancelled caller still waits for the thread to return."""
    loop = asyncio.get_running_loop()
    future = loop.run_in_executor(executor, function, *args)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        await _until_done(future)
        raise


async def _until_done(future: asyncio.Future) -> None:
    """Wait for ``future`` to finish, however often the waiter itself is cancelled meanwhile."""
    while not future.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({future})
    if not future.cancelled():
        future.exception()  # retrieved: its failure belongs to the work that was abandoned
