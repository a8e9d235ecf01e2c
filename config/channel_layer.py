"""The PostgreSQL channel layer, kept listening across database restarts.

channels_postgres LISTENs on one connection in a task started by the first ``receive``. Two things in its
listener break a deployment of several server processes when PostgreSQL restarts:

- the task ends with the connection's error and is never started again (its "running" flag stays set), so
  live edits and presence stop crossing between the processes for good;
- before listening it deletes every unexpired message of *every* channel and queues them in its own process
  (``retrieve_non_expired_queued_messages``), so a process that starts or listens again takes the messages
  meant for the others' channels, which then never see them.

So the listener here is supervised: when its connection breaks it waits a moment (doubling up to a few
seconds while PostgreSQL stays away) and listens again on a new connection, its "running" flag left set (were
it cleared, the next ``receive`` would start a second listener beside it). Each time it starts listening it
catches up by reading, without deleting, the unexpired messages of this process's own channels that it has
not seen (the layer keeps a message's row until it expires, 60 s), so what was sent while it was away arrives
late rather than never. A message seen in the catch-up and again as a notification is queued once. The
hub's handlers take a repeated message anyway: a stored update applies once; presence and "project changed"
are idempotent.

The layer's connection pool is given psycopg's own check, so a connection the restart broke is replaced when
it is taken instead of failing the message it was taken for (settings: ``PSYCOPG_OPTIONS``).
"""

import asyncio
import base64
import logging

import psycopg
from channels_postgres.core import PostgresChannelLayer
from channels_postgres.db import MESSAGE_TABLE
from psycopg import sql

logger = logging.getLogger(__name__)

NOTIFY_CHANNEL = "channels_postgres_messages"  # the layer's trigger notifies here
SHUTDOWN = "1:shutdown"
RECONNECT_FIRST_SECONDS = 0.2
RECONNECT_MAX_SECONDS = 5.0

_MISSED_SQL = sql.SQL(
    "SELECT id, channel, message, extract(epoch FROM expire)::text FROM {table} "
    "WHERE channel = ANY(%s) AND id > %s AND expire > now() ORDER BY id"
).format(table=sql.Identifier(MESSAGE_TABLE))


class ReconnectingPostgresChannelLayer(PostgresChannelLayer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._last_seen_id = 0  # the highest message id this process's listener has queued

    async def listen_to_all_channels(self) -> None:
        delay = RECONNECT_FIRST_SECONDS
        while True:
            started = asyncio.get_running_loop().time()
            try:
                await self._listen()
                return  # a shutdown notification ended it, as the layer intends
            except (psycopg.OperationalError, psycopg.InterfaceError, OSError) as exc:
                if asyncio.get_running_loop().time() - started > RECONNECT_MAX_SECONDS:
                    delay = RECONNECT_FIRST_SECONDS  # it had been listening: a new outage
                logger.warning(
                    "the channel layer's listening connection broke; listening again",
                    extra={"error": str(exc), "retry_in_seconds": delay},
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, RECONNECT_MAX_SECONDS)

    async def _listen(self) -> None:
        conninfo = psycopg.conninfo.make_conninfo(conninfo="", **self.db_params)
        async with await psycopg.AsyncConnection.connect(conninfo=conninfo, autocommit=True) as connection:
            await connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
            caught_up = await self._catch_up(connection)
            self.listener_task_is_running.set()
            async for event in connection.notifies():
                if event.payload == SHUTDOWN:
                    self.listener_task_is_running.clear()
                    return
                message_id, channel = event.payload.split(":", 2)[:2]
                if int(message_id) in caught_up:
                    continue
                self._last_seen_id = max(self._last_seen_id, int(message_id))
                if self._channel_advisory_locks.get(channel, False):  # a channel this process receives on
                    self._get_or_create_queue(channel).put_nowait(event.payload)

    async def _catch_up(self, connection) -> set[int]:
        """Queue the unexpired messages of this process's channels sent since the last one it saw; their ids.
        Listening already, so nothing sent from here on is missed between this read and the notifications."""
        channels = [channel for channel, held in self._channel_advisory_locks.items() if held]
        if not channels:
            return set()
        cursor = await connection.execute(_MISSED_SQL, [channels, self._last_seen_id])
        queued = set()
        for message_id, channel, message, expires in await cursor.fetchall():
            encoded = base64.b64encode(bytes(message)).decode("ascii")
            self._get_or_create_queue(channel).put_nowait(f"{message_id}:{channel}:{encoded}:{expires}")
            queued.add(message_id)
            self._last_seen_id = max(self._last_seen_id, message_id)
        if queued:
            logger.info("the channel layer caught up on messages sent while it was away", extra={"count": len(queued)})
        return queued
