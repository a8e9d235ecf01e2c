"""Presence: who else has the document open, and where their cursor is (the Yjs awareness protocol).

Awareness is not stored: each editor re-announces itself every 15 seconds, and a state not renewed for
``OUTDATED_SECONDS`` is forgotten, as Yjs itself does. The server keeps what it relays only so that a
newly connected editor sees everybody at once.

Editors may not speak for others: a socket may announce only client ids it introduced itself, and the
name and colour shown are the server's (the signed-in user's), whatever the editor claimed; only the
cursor is taken from the editor, within a size bound.
"""

import json
import time
from dataclasses import dataclass

from collaboration.live.protocol import AwarenessEntry, MalformedMessage

OUTDATED_SECONDS = 30.0
MAX_CURSOR_JSON = 2048


@dataclass
class Presence:
    entry: AwarenessEntry
    owner: object | None  # the local socket that announced it, ``None`` for one relayed by another process
    renewed_at: float


def entry_sanitized(entry: AwarenessEntry, *, username: str, colour: str) -> AwarenessEntry:
    """The entry as the server relays it: the user's own name and colour, the editor's cursor."""
    try:
        state = json.loads(entry.state_json)
    except ValueError as exc:
        raise MalformedMessage("An awareness state is not JSON.") from exc
    if state is None:
        return entry
    if not isinstance(state, dict):
        raise MalformedMessage("An awareness state must be an object or null.")
    cursor = state.get("cursor")
    if cursor is not None and (not isinstance(cursor, dict) or len(json.dumps(cursor)) > MAX_CURSOR_JSON):
        cursor = None
    sanitized = {"user": {"name": username, "color": colour, "colorLight": colour + "33"}, "cursor": cursor}
    return AwarenessEntry(entry.client_id, entry.clock, json.dumps(sanitized, separators=(",", ":")))


class Presences:
    """The awareness states of one document's editors, as this process last relayed them."""

    def __init__(self):
        self._by_client: dict[int, Presence] = {}

    def owner_of(self, client_id: int) -> object | None:
        presence = self._by_client.get(client_id)
        return presence.owner if presence else None

    def may_announce(self, client_id: int, socket) -> bool:
        presence = self._by_client.get(client_id)
        return presence is None or presence.owner in (socket, None)

    def apply(self, entries: list[AwarenessEntry], owner) -> list[AwarenessEntry]:
        """Take in newer states; returns the entries that changed something."""
        applied = []
        now = time.monotonic()
        for entry in entries:
            known = self._by_client.get(entry.client_id)
            if known is not None and entry.clock < known.entry.clock:
                continue
            if entry.state_json == "null":
                self._by_client.pop(entry.client_id, None)
            else:
                self._by_client[entry.client_id] = Presence(entry, owner, now)
            applied.append(entry)
        return applied

    def departures_of(self, owner) -> list[AwarenessEntry]:
        """Null states for every client id ``owner`` announced, which are forgotten here."""
        leaving = [client for client, presence in self._by_client.items() if presence.owner is owner]
        entries = [AwarenessEntry(client, self._by_client.pop(client).entry.clock + 1, "null") for client in leaving]
        return entries

    def current(self, *, owned_here_only: bool = False) -> list[AwarenessEntry]:
        """The live states, outdated ones forgotten first."""
        cutoff = time.monotonic() - OUTDATED_SECONDS
        for client in [client for client, presence in self._by_client.items() if presence.renewed_at < cutoff]:
            del self._by_client[client]
        return [
            presence.entry for presence in self._by_client.values() if not owned_here_only or presence.owner is not None
        ]
