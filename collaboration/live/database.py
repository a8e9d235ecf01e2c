"""The threads on which live editing talks to the database.

A socket's work (opening, storing updates, reading state and access) is synchronous Django code. It runs
on a few threads of this process, each document always on the same one, so the updates of a document are
stored in the order they arrived and its cached Yjs state (``collaboration.log``) is used by one thread at a
time. Each thread keeps its database connection between calls, since opening one per keystroke would cost
more than storing the keystroke. A connection found broken is closed and the call made once more on a new
one: every call made here may safely run twice (an update stored already is recognised as contained).
"""

import asyncio
import functools
import logging
from concurrent.futures import ThreadPoolExecutor

from django.db import InterfaceError, OperationalError, connection

logger = logging.getLogger(__name__)

THREADS = 2
_executors = [ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"live-database-{n}") for n in range(THREADS)]


async def run(file_id: int, function, /, **kwargs):
    """``function(**kwargs)`` on the thread of document ``file_id``."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_executors[file_id % THREADS], functools.partial(_call, function, kwargs))


def _call(function, kwargs):
    try:
        return function(**kwargs)
    except (OperationalError, InterfaceError):
        if connection.connection is not None and connection.is_usable():
            raise
        logger.warning("live editing's database connection broke; retrying on a new one")
        connection.close()
        return function(**kwargs)
